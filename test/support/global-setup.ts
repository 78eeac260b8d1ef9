/**
 * Runs once before the test files: makes sure the real helm and kubectl are
 * cached (npm test already ran scripts/fetch-tools.mjs; this covers a bare
 * `npx vitest`) and points flotilla at them; installs Go for the tar
 * differential test when missing (ensureGo).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureGo } from './tar-readers/readers.js';

export default function setup(): () => void {
  const root = resolve(import.meta.dirname, '..', '..');
  execFileSync(process.execPath, [join(root, 'scripts', 'fetch-tools.mjs')], { stdio: 'inherit' });
  process.env.FLOTILLA_HELM = join(root, '.cache', 'tools', 'helm');
  process.env.FLOTILLA_KUBECTL = join(root, '.cache', 'tools', 'kubectl');
  // Plugins keep generated passwords offline under the state folder: never the tester's home.
  process.env.FLOTILLA_STATE_DIR ??= mkdtempSync(join(tmpdir(), 'flotilla-test-state-'));
  // The CLI's code cache (src/cli/code-cache.ts), likewise; a few MB, removed after the run.
  const codeCache = process.env.FLOTILLA_CACHE_DIR === undefined ? mkdtempSync(join(tmpdir(), 'flotilla-test-cache-')) : undefined;
  if (codeCache) process.env.FLOTILLA_CACHE_DIR = codeCache;
  // No build server (src/build-server) outlives a test: the tests of it turn it on themselves.
  process.env.FLOTILLA_BUILD_SERVER = '0';
  ensureGo();
  return () => {
    if (codeCache) rmSync(codeCache, { recursive: true, force: true });
  };
}
