/**
 * `flotilla build --watch` as a user runs it, stopped with Ctrl-C: the shipped
 * CLI, its exit code and what it leaves in the output folder.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, writeApp } from '../support/app-fixture.js';

const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');

describe('flotilla build --watch, stopped by Ctrl-C', () => {
  it('exits 0 right after a build, its cache files written and nothing half-written', async () => {
    const app = writeApp();
    const out = tempDir();
    // The build makes temp folders (the plugin bundle), whose own SIGINT handler must not kill the process.
    const child = spawn(process.execPath, [cli, 'build', app, '--watch', '-d', out], { env: { ...process.env, FLOTILLA_BUILD_SERVER: '0' } });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on('exit', (code, signal) => done({ code, signal })));
    for (let i = 0; i < 400 && !/^built /m.test(stdout); i++) await new Promise((done) => setTimeout(done, 50));
    expect(stdout).toMatch(/^built /m);
    // At once: well inside the moment a build waits before it writes its cache files.
    child.kill('SIGINT');
    expect(await exited).toEqual({ code: 0, signal: null });
    const cache = readdirSync(join(out, '.flotilla-cache'));
    expect(cache).toEqual(expect.arrayContaining(['bundle-pieces.json', 'manifests.json', 'parsed-yaml.bin']));
    expect(cache.filter((name) => name.endsWith('.partial'))).toEqual([]);
  });
});
