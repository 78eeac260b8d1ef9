#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js) into ES modules: the entry
// dist/cli/flotilla.mjs and the chunks it imports, dist/cli/flotilla-<hash>.mjs.
// Node then loads a few files instead of ~150, and splitting means a command
// compiles only the code it can reach: each command's module is a dynamic
// import in src/cli/commands/index.ts, so `flotilla build` never parses the
// lifecycle, importer or policy code. The chunks sit beside the entry, two
// folders below the package root like every compiled module, so paths found
// relative to a module (the tools cache, the plugin API folder, the
// precompiled validators) are the same from either.
// esbuild and the Kubernetes client stay outside: both load only when used.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'cli');
// Chunk names change with their content: drop the previous build's.
for (const name of readdirSync(outdir)) if (/^flotilla(-[A-Z0-9]+)?\.mjs(\.LEGAL\.txt)?$/.test(name)) rmSync(join(outdir, name));
await build({
  entryPoints: { flotilla: join(outdir, 'main.js') },
  outdir,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'flotilla-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['esbuild', '@kubernetes/client-node'],
  // Some dependencies are CommonJS and call require(); give every file one. (esbuild keeps main's #! line first.)
  banner: { js: "import { createRequire as flotillaCreateRequire } from 'node:module';\nconst require = flotillaCreateRequire(import.meta.url);" },
  legalComments: 'linked',
  logLevel: 'warning',
});
