#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js) into one script (and the plugin
// process's script into dist/plugins/sandbox-child.mjs),
// dist/cli/flotilla-<content hash>.cjs, and makes the entry that runs it,
// dist/cli/flotilla.cjs (from src/cli/launch.ts and code-cache.ts), which keeps V8's bytecode
// of each command between runs: Node 20 has no compile cache for ES modules,
// so the bundle is CommonJS-shaped for a vm.Script. Node then reads two files
// instead of ~150, and a command neither parses the bundle nor compiles the
// functions it ran before. Code a command does not reach is never compiled:
// esbuild initialises each module lazily behind the command registry's
// dynamic imports (src/cli/commands/index.ts), and V8 compiles a function
// when it first runs.
//
// Both files sit two folders below the package root like every compiled
// module, so paths found relative to a module (the tools cache, the plugin
// API folder, the precompiled validators) are the same from either.
// esbuild and the Kubernetes client stay outside: both load only when used.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'cli');
const dist = `${join(root, 'dist')}/`;

// A script cannot use `import.meta.url` nor (from cached bytecode, on Node 20)
// `import()`: flotilla's compiled modules get both from the launcher's
// parameters instead (src/cli/code-cache.ts). tsc writes them plainly, so a
// textual rewrite of dist/ is exact; the bundle is checked for leftovers below.
const launcherParameters = {
  name: 'launcher-parameters',
  setup(builder) {
    builder.onLoad({ filter: /\.js$/ }, ({ path }) => {
      if (!path.startsWith(dist)) return undefined;
      let code = readFileSync(path, 'utf8');
      // The precompiled validators (scripts/compile-schemas.mjs) load with load('./validators/…'):
      // as require() esbuild bundles each, to run (and be cached) only once its schema is met.
      if (path === join(dist, 'app', 'schemas.compiled.js')) code = code.replace(/\bload\('/g, "require('");
      code = code
        .replace(/\bimport\.meta\.url\b/g, 'flotillaModuleUrl')
        // import() of a package or a file URL; relative ones are bundled.
        .replace(/(?<![\w$.])import\((?!\s*['"]\.)/g, 'flotillaImport(');
      return { contents: code, loader: 'js' };
    });
  },
};

const result = await build({
  entryPoints: [join(outdir, 'main.js')],
  bundle: true,
  write: false,
  outfile: join(outdir, 'flotilla.cjs'),
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['esbuild', '@kubernetes/client-node'],
  plugins: [launcherParameters],
  legalComments: 'external',
  logLevel: 'warning',
});
if (result.warnings.length > 0) throw new Error('the CLI bundle must build without warnings');
const outputs = Object.fromEntries(result.outputFiles.map((file) => [file.path.endsWith('.LEGAL.txt') ? 'legal' : 'code', file.text]));
// No #! line: it is the entry's. The launcher reads the bundle as Latin-1,
// which is faster than decoding UTF-8 and exact for ASCII: esbuild escapes
// every other character but in comments.
const code = outputs.code.replace(/^#!.*\n/, '').replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
for (const [pattern, what] of [
  [/(?<![\w$.])import\(/, 'a dynamic import()'],
  [/\bimport\.meta\b/, 'import.meta'],
]) {
  const found = pattern.exec(code);
  if (found) throw new Error(`the CLI bundle holds ${what}, which a cached script cannot run: …${code.slice(found.index - 80, found.index + 40)}…`);
}
// The launcher runs the file as a script whose value is a function of its parameters.
const { BUNDLE_PARAMETERS } = await import(pathToFileURL(join(outdir, 'code-cache.js')).href);
const script = `(function (${BUNDLE_PARAMETERS.join(', ')}) {${code}\n})`;
const contentHash = createHash('sha256').update(script).digest('hex').slice(0, 16);
const bundleName = `flotilla-${contentHash}.cjs`;

// The previous build's bundle and entry (and the split chunks of older builds).
for (const name of readdirSync(outdir)) {
  if (/^flotilla(-[A-Za-z0-9]+)?\.(mjs|cjs)(\.LEGAL\.txt)?$/.test(name)) rmSync(join(outdir, name));
}
writeFileSync(join(outdir, bundleName), script);
if (outputs.legal) writeFileSync(join(outdir, `${bundleName}.LEGAL.txt`), outputs.legal);

// The entry is CommonJS: Node starts a CommonJS file a few milliseconds
// sooner than an ES module, and a one-shot command pays that every run. Its
// first lines are also a shell script, which chooses how Node starts
// (src/cli/entry-shell.ts).
const { entryShellLines } = await import(pathToFileURL(join(outdir, 'entry-shell.js')).href);
const { COMMANDS_WITHOUT_TLS } = await import(pathToFileURL(join(outdir, 'commands', 'index.js')).href);
const result2 = await build({
  stdin: {
    contents: `const { join } = require('node:path');\nconst { launch } = require('./launch.js');\nlaunch(join(__dirname, ${JSON.stringify(bundleName)}), ${JSON.stringify(contentHash)}, __filename);\n`,
    resolveDir: outdir,
    sourcefile: 'flotilla-entry.cjs',
  },
  outfile: join(outdir, 'flotilla.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  banner: { js: entryShellLines(COMMANDS_WITHOUT_TLS).join('\n') },
  logLevel: 'warning',
});
if (result2.warnings.length > 0) throw new Error('the CLI entry must build without warnings');
chmodSync(join(outdir, 'flotilla.cjs'), 0o755);

// The plugin process's script (src/plugins/sandbox.ts): one file, as the
// permission model lets that process read its own script and the plugin
// bundle and nothing else.
const sandboxChild = await build({
  entryPoints: [join(root, 'dist', 'plugins', 'sandbox-child.js')],
  outfile: join(root, 'dist', 'plugins', 'sandbox-child.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
});
if (sandboxChild.warnings.length > 0) throw new Error('the plugin process script must build without warnings');
