/**
 * A build loads only what it uses: not the Kubernetes client, nor the policy
 * engine, the importer or the verifier, nor Handlebars, ajv or node-tar (not
 * needed for flotilla's precompiled schemas and plain names), and esbuild
 * only to bundle plugins whose sources changed (the bundle is reused otherwise).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, writeApp } from '../support/app-fixture.js';

const root = resolve(import.meta.dirname, '..', '..');
const cli = join(root, 'dist', 'cli', 'flotilla.mjs');
const hook = join(root, 'test', 'support', 'log-imports.mjs');

/** Every module file reachable through static imports from `file` (the compiled, unbundled dist/). */
function staticGraph(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  for (const [, specifier] of text.matchAll(/^(?:import|export)\s+(?:[\w*{}\s,$]+\s+from\s+)?'([^'$]+)';$/gm)) {
    if (specifier!.startsWith('.')) staticGraph(resolve(dirname(file), specifier!), seen);
    else seen.add(specifier!);
  }
  return seen;
}

/** `checksValues`: the first build of these inputs renders the app's values templates (build refuses what preflight refuses); later ones reuse that check. */
function importsOfBuild(app: string, out: string, checksValues = false): string[] {
  const run = spawnSync(process.execPath, ['--import', hook, cli, 'build', app, '-d', out], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  const required = [...run.stderr.matchAll(/^REQUIRE (\S+)$/gm)].map((m) => m[1]!);
  // (ajv's small runtime helpers serve the precompiled validators; its compiler must not load.)
  const unused = required.filter((path) => new RegExp(`/node_modules/(${checksValues ? '' : 'handlebars|'}ajv|tar)/`).test(path) && !path.includes('/node_modules/ajv/dist/runtime/'));
  expect(unused).toEqual([]);
  return [...run.stderr.matchAll(/^IMPORT (\S+)$/gm)].map((m) => m[1]!);
}

const plugin = `import { ChartPlugin } from 'flotilla/plugin';\nexport default class Web extends ChartPlugin {\n  chart = 'web';\n  getOverrides() {\n    return { conf: { from: 'plugin' } };\n  }\n}\n`;

describe('lazy loading', () => {
  it('the build command statically imports no Kubernetes client, esbuild, policy engine, importer or verifier', () => {
    const graph = [...staticGraph(join(root, 'dist', 'cli', 'commands', 'build.js'))].map((p) => (p.startsWith(root) ? p.slice(root.length + 1) : p));
    expect(graph).toContain('dist/build/build.js');
    for (const module of graph) {
      expect(module).not.toMatch(/^(esbuild|@kubernetes\/client-node)/);
      expect(module).not.toMatch(/^dist\/(policies|import|verify|preflight)\//);
    }
  });

  it('a shipped CLI build loads esbuild only while plugins need bundling, and never the Kubernetes client', () => {
    const app = writeApp({ 'plugins/010_web.ts': plugin });
    const out = tempDir();
    const first = importsOfBuild(app, out, true);
    expect(first.some((url) => url.includes('/node_modules/esbuild/'))).toBe(true);
    const again = importsOfBuild(app, out);
    expect(again.filter((url) => !url.startsWith('node:'))).toEqual([`file://${cli}`]);
    for (const url of [...first, ...again]) expect(url).not.toContain('@kubernetes/client-node');
  });
});
