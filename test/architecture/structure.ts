/**
 * The rules of src/'s shape (docs/architecture.md, "Dependency direction"),
 * as functions of a source tree — a map from a path under src/ to its text —
 * so test/architecture/imports.test.ts holds them both to the real tree and
 * to small made-up trees that break each one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';

/** Files under src/ by their path relative to it (`app/load.ts`), with their text. */
export type SourceTree = ReadonlyMap<string, string>;

export function readSourceTree(root: string): SourceTree {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) files.set(relative(root, path).split('\\').join('/'), readFileSync(path, 'utf8'));
    }
  };
  walk(root);
  return files;
}

/**
 * The folders of src/ from the top of docs/architecture.md's diagram down:
 * a folder imports folders of rows below its own, never above. `.` is
 * src/index.ts, the package's entry. The test reads the diagram and holds it
 * to these rows, so the page and the rule cannot drift apart.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['.', 'cli'],
  ['starlingx'],
  ['lifecycle', 'build', 'verify', 'import', 'preflight', 'policies', 'edit', 'init'],
  ['session', 'kube'],
  ['plugins', 'values', 'flux', 'tarball', 'charts', 'oci', 'dependencies', 'catalog', 'app'],
  ['names', 'files', 'cache', 'yaml', 'diagnostics', 'tools', 'concurrency', 'build-server'],
];

/** Within a row, which folder may import which (the page's "Within the middle row" and "In the bottom row"). */
export const SAME_ROW_USES: Readonly<Record<string, readonly string[]>> = {
  edit: ['build'],
  lifecycle: ['verify'],
  plugins: ['app', 'values'],
  app: ['values', 'catalog', 'flux'],
  oci: ['tarball', 'charts'],
  dependencies: ['app', 'charts', 'oci'],
  charts: ['tarball'],
  files: ['diagnostics'],
  yaml: ['diagnostics'],
  tools: ['diagnostics'],
  cache: ['files'],
  'build-server': ['cache', 'files'],
};

/**
 * The plugin API (`flotilla/plugin`): a leaf any module may use, past the
 * layers and past index.ts (it is published on its own).
 */
export const PLUGIN_API = 'plugins/api.ts';

/** Imports of one file past another folder's index.ts that are meant, with why. */
export const DEEP_IMPORTS_ALLOWED: Readonly<Record<string, readonly string[]>> = {
  // Loaded only when a build server must be started: through build-server/index.ts the
  // launcher every command starts from would carry the whole server.
  'cli/launch.ts': ['build-server/start.ts'],
};

/**
 * Exports no file of src/ imports but that are used all the same: the
 * package's entries (package.json `exports`, the bundles scripts/ make) and
 * what the build scripts load from dist/.
 */
export const PUBLIC_ENTRIES: Readonly<Record<string, readonly string[] | 'all'>> = {
  'index.ts': 'all',
  'plugins/api.ts': 'all',
  'cli/main.ts': 'all',
  'cli/launch.ts': ['launch'],
  'plugins/sandbox-child.ts': 'all',
  // scripts/bundle-cli.mjs
  'cli/code-cache.ts': ['BUNDLE_PARAMETERS'],
  'cli/entry-shell.ts': ['entryShellLines'],
  'cli/commands/index.ts': ['COMMANDS_WITHOUT_TLS'],
  // scripts/compile-schemas.mjs
  'app/index.ts': ['metadataSchema', 'releasesSchemaFor', 'deploymentSchema', 'specLayerSchema', 'createSchemaAjv', 'schemaHash'],
  'build/index.ts': ['buildConfigSchema'],
  'flux/index.ts': ['FLUX_TARGETS', 'helmReleaseSchemas', 'helmRepositorySchema'],
};

/** The folder of a file under src/ (`.` for src/index.ts). */
export const folderOf = (file: string): string => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '.');

/** A file's code without its comments (kept line for line: a block comment's lines stay, empty). */
export function codeOf(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, '')).replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** What a file imports from another file of the tree: the names (`*` for all of them), and whether it re-exports them. */
interface ImportOf {
  readonly target: string;
  readonly names: readonly { readonly imported: string; readonly local: string }[] | '*';
  readonly reexport: boolean;
  readonly dynamic: boolean;
}

function resolveIn(tree: SourceTree, from: string, spec: string): string | undefined {
  // (A file outside src/, a test, names src/'s files as `../src/…`.)
  const target = posix.normalize(posix.join(posix.dirname(from), spec.replace(/\.js$/, '.ts'))).replace(/^\.\.\/src\//, '');
  return tree.has(target) ? target : undefined;
}

/** The names of `{ a, b as c, type d }` (without the types when `types` is false). */
const nameList = (list: string, types = true) =>
  list
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '' && (types || !/^type\s/.test(part)))
    .map((part) => part.replace(/^type\s+/, ''))
    .map((part) => {
      const [imported, local] = part.split(/\s+as\s+/);
      return { imported: imported!, local: local ?? imported! };
    });

/** The relative imports and re-exports of a file that name a file of the tree (a template's text names none). */
export function importsOf(tree: SourceTree, file: string): ImportOf[] {
  const code = codeOf(tree.get(file) ?? '');
  const found: ImportOf[] = [];
  const add = (spec: string, names: ImportOf['names'], reexport: boolean, dynamic = false) => {
    const target = resolveIn(tree, file, spec);
    if (target !== undefined) found.push({ target, names, reexport, dynamic });
  };
  for (const m of code.matchAll(/(?:^|\n)\s*(import|export)\s+(type\s+)?([^'"`;]*?)\s*from\s+'(\.[^']+)'/g)) {
    const [, keyword, , clause, spec] = m;
    const reexport = keyword === 'export';
    if (/^\*\s*$/.test(clause!)) add(spec!, '*', reexport);
    else if (/^\*\s+as\s+/.test(clause!)) add(spec!, '*', reexport);
    else {
      const braces = /\{([^}]*)\}/.exec(clause!);
      const names = braces ? nameList(braces[1]!) : [];
      const defaultName = /^([\w$]+)\s*(,|$)/.exec(clause!);
      if (defaultName && !reexport) names.push({ imported: 'default', local: defaultName[1]! });
      add(spec!, names, reexport);
    }
  }
  for (const m of code.matchAll(/(?:^|\n)\s*import\s+'(\.[^']+)'/g)) add(m[1]!, [], false);
  // A dynamic import uses the names it destructures or reads (`const { a } = await import(…)`,
  // `import(…).then(({ a }) => …)`, `(await import(…)).a`), else all of them.
  for (const m of code.matchAll(
    /(?:const\s*\{([^}]*)\}\s*=\s*await\s+|\(await\s+)?(?<![\w$.])import\(\s*'(\.[^']+)'\s*\)(?:\)\.([\w$]+)|\.then\(\s*\(\s*\{([^}]*)\}\s*\))?/g,
  )) {
    const [, destructured, spec, read, thenNames] = m;
    const names = destructured ?? thenNames;
    add(spec!, names !== undefined ? nameList(names) : read !== undefined && m[0].startsWith('(await') ? [{ imported: read, local: read }] : '*', false, true);
  }
  return found;
}

/** The names a file declares and exports itself (not those it re-exports); `types` only when asked. */
export function localExportsOf(text: string, types = true): string[] {
  // (A template's text, code written out for an app, exports nothing here.)
  const code = codeOf(text).replace(/`(?:\\[\s\S]|[^`\\])*`/g, '``');
  const kinds = types ? 'function\\*?|class|const\\s+enum|const|let|var|type|interface|enum' : 'function\\*?|class|const\\s+enum|const|let|var|enum';
  const declared = new RegExp(`(?:^|\\n)\\s*export\\s+(?:declare\\s+)?(?:default\\s+)?(?:async\\s+)?(?:abstract\\s+)?(?:${kinds})\\s+([\\w$]+)`, 'g');
  const names = [...code.matchAll(declared)].map((m) => m[1]!);
  for (const m of code.matchAll(/(?:^|\n)\s*export\s+(type\s+)?\{([^}]*)\}\s*(?!\s*from)(?:;|\n|$)/g)) {
    if (m[1] === undefined || types) names.push(...nameList(m[2]!, types).map((n) => n.local));
  }
  if (/(?:^|\n)\s*export\s+default\s/.test(code)) names.push('default');
  return [...new Set(names)];
}

/** The import graph between files: file → the files it imports. */
export function importGraph(tree: SourceTree): Map<string, string[]> {
  return new Map([...tree.keys()].map((file) => [file, importsOf(tree, file).map((i) => i.target)]));
}

/** Import cycles between files, one line each (`a.ts → b.ts → a.ts`). */
export function importCycles(tree: SourceTree): string[] {
  const graph = importGraph(tree);
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (file: string, path: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...path.slice(path.indexOf(file)), file].join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file, []);
  return cycles;
}

/** The files the plugin API reaches: usable from anywhere. */
function pluginApiFiles(tree: SourceTree): Set<string> {
  const graph = importGraph(tree);
  const reached = new Set<string>();
  const walk = (file: string): void => {
    if (reached.has(file) || !tree.has(file)) return;
    reached.add(file);
    for (const next of graph.get(file) ?? []) walk(next);
  };
  walk(PLUGIN_API);
  return reached;
}

/** Imports that point up the layers, or sideways within a row where SAME_ROW_USES does not allow it. */
export function layeringViolations(tree: SourceTree, layers: readonly (readonly string[])[] = LAYERS, sameRow = SAME_ROW_USES): string[] {
  const rowOf = new Map(layers.flatMap((row, i) => row.map((folder) => [folder, i] as const)));
  const api = pluginApiFiles(tree);
  const found: string[] = [];
  for (const [file, targets] of importGraph(tree)) {
    const from = folderOf(file);
    const fromRow = rowOf.get(from);
    if (fromRow === undefined) {
      found.push(`${file}: its folder ${from} is in no row of the layers`);
      continue;
    }
    for (const target of new Set(targets)) {
      const to = folderOf(target);
      if (to === from || api.has(target)) continue;
      const toRow = rowOf.get(to);
      if (toRow === undefined) found.push(`${file} imports ${target}, whose folder ${to} is in no row of the layers`);
      else if (toRow < fromRow) found.push(`${file} imports ${target}: ${from} is below ${to}`);
      else if (toRow === fromRow && !(sameRow[from] ?? []).includes(to))
        found.push(`${file} imports ${target}: ${from} and ${to} share a row and ${from} may not use ${to}`);
    }
  }
  return found;
}

/** Imports of another folder's file other than its index.ts (the plugin API and DEEP_IMPORTS_ALLOWED aside). */
export function deepImports(tree: SourceTree, allowed = DEEP_IMPORTS_ALLOWED): string[] {
  const api = pluginApiFiles(tree);
  const found: string[] = [];
  for (const [file, targets] of importGraph(tree)) {
    for (const target of new Set(targets)) {
      if (folderOf(target) === folderOf(file) || folderOf(target) === '.') continue;
      if (target === `${folderOf(target)}/index.ts` || api.has(target) || (allowed[file] ?? []).includes(target)) continue;
      found.push(`${file} imports ${target}, past ${folderOf(target)}/index.ts`);
    }
  }
  return found;
}

/**
 * Where a folder may take only some names of a lower one: the lifecycle
 * reaches a cluster only through the interfaces it declares
 * (src/lifecycle/cluster.ts), which src/kube implements; of src/kube it may
 * use the words those interfaces speak (objects, selectors, watches, the
 * lock's options), the typed errors a call ends with, and flotilla's own
 * labels and names — never a client or a call.
 */
export const NARROW_USES: Readonly<Record<string, { readonly folder: string; readonly names: readonly string[]; readonly packages: readonly string[] }>> = {
  lifecycle: {
    folder: 'kube',
    names: [
      'KubeObject',
      'KindSelector',
      'WatchJudge',
      'WatchOptions',
      'LeaseOptions',
      'HeldLease',
      'AlreadyExists',
      'Conflict',
      'NotFound',
      'APP_LABEL',
      'MANAGED_BY',
      'FIELD_MANAGER',
      'SYSTEM_NAMESPACE',
      'recordsConfigMapName',
      'defaultHolder',
    ],
    packages: ['@kubernetes/client-node'],
  },
};

/** Imports that reach past a narrow use (NARROW_USES): a name not allowed, all of a folder at once, or a package kept out. */
export function narrowUseBreaches(tree: SourceTree, uses = NARROW_USES): string[] {
  const found: string[] = [];
  for (const [file, text] of tree) {
    const use = uses[folderOf(file)];
    if (!use) continue;
    for (const i of importsOf(tree, file)) {
      if (folderOf(i.target) !== use.folder) continue;
      if (i.names === '*') found.push(`${file} imports all of ${i.target}: ${folderOf(file)} may take only some names of ${use.folder}`);
      else
        for (const n of i.names)
          if (!use.names.includes(n.imported)) found.push(`${file} imports ${n.imported} from ${use.folder}: ${folderOf(file)} may not use it`);
    }
    for (const m of codeOf(text).matchAll(/(?:from|import\()\s*['"]([^.'"][^'"]*)['"]/g))
      if (use.packages.includes(m[1]!)) found.push(`${file} imports ${m[1]}: ${folderOf(file)} may not use it`);
  }
  return found;
}

/** Lines outside src/files that make a temporary folder themselves. */
export function tempFolderMakers(tree: SourceTree): string[] {
  const makers = /(?<![\w$])(mkdtemp|mkdtempSync|mkdtempDisposable|mkdtempDisposableSync)\b/;
  return [...tree]
    .filter(([file]) => folderOf(file) !== 'files')
    .flatMap(([file, text]) =>
      codeOf(text)
        .split('\n')
        .flatMap((line, i) => (makers.test(line) ? [`${file}:${i + 1}`] : [])),
    );
}

/**
 * A rule of flotilla's with one owner (docs/architecture.md, "One owner per
 * rule"), where a second definition can be told from the code: what such a
 * definition looks like on a line, and the files (`cli/options.ts`) or
 * folders (`values/`) that may hold it. Rules a pattern cannot tell (the
 * namespace most releases use, the plugin-to-release binding) have one
 * exported owner instead, which the page names.
 */
export interface OwnedRule {
  readonly rule: string;
  readonly pattern: RegExp;
  readonly owners: readonly string[];
  /** Only files below these are held to it (default: all of src/). */
  readonly within?: readonly string[];
  /**
   * Files that still hold a second definition, to move to the owner (each
   * named with whose scope it is): the test fails when one is added, and
   * when one is gone, so the list is emptied as the code is.
   */
  readonly pending?: readonly string[];
}

export const OWNED_RULES: readonly OwnedRule[] = [
  {
    rule: 'the merge of layered trees (values layers, release defaults, user overrides, the spec): src/values, never a merge library',
    pattern: /['"]deepmerge['"]|['"]lodash(\.merge|\/merge)?['"]/,
    owners: ['values/'],
  },
  {
    rule: "how a HelmRelease's Ready condition is read",
    pattern: /['"]Ready['"]/,
    owners: ['lifecycle/readiness.ts'],
  },
  {
    rule: "the app's namespace (metadata flotilla.namespace, else the one most releases use): App.namespace, never the metadata field",
    pattern: /\bapp\.metadata\.namespace\b/,
    owners: ['app/'],
  },
  {
    rule: "StarlingX's chart server, the default HelmRepository URL",
    pattern: /helm_charts\//,
    owners: ['build/config.ts'],
  },
  {
    rule: "the cache entry format (sealed under the user's cache key, checked as read)",
    pattern: /\b(sealEntry|openEntry|createHmac)\b/,
    owners: ['cache/', 'cli/code-cache.ts'],
  },
  {
    rule: "the CLI's usage error (exit 2)",
    pattern: /\bclass\s+\w*UsageError\b|\bnew\s+(?!UsageError\b)\w+UsageError\b/,
    owners: ['cli/options.ts'],
    within: ['cli/'],
  },
  {
    rule: "how a command writes: through its Output (src/cli/output.ts), never the process's streams",
    pattern: /(?<![\w$])console\.|\bprocess\.(stdout|stderr)\b/,
    owners: [],
    within: ['cli/commands/'],
  },
  {
    rule: 'the JSON and YAML shape of printed data (apiVersion flotilla/v1 and a kind)',
    pattern: /['"`]flotilla\/v\d/,
    owners: ['cli/output.ts'],
  },
];

const isUnder = (file: string, places: readonly string[]): boolean => places.some((place) => (place.endsWith('/') ? file.startsWith(place) : file === place));

/** Lines of src/ that define a rule a second time: outside the rule's owners, matching its pattern (comments aside). Pending files are left out. */
export function secondOwners(tree: SourceTree, rules: readonly OwnedRule[] = OWNED_RULES): string[] {
  return rules.flatMap((owned) =>
    [...tree]
      .filter(([file]) => (owned.within === undefined || isUnder(file, owned.within)) && !isUnder(file, owned.owners) && !(owned.pending ?? []).includes(file))
      .flatMap(([file, text]) =>
        codeOf(text)
          .split('\n')
          .flatMap((line, i) => (owned.pattern.test(line) ? [`${file}:${i + 1}: ${owned.rule}`] : [])),
      ),
  );
}

/** The pending files of each rule that no longer hold a second definition (to be taken off the list). */
export function pendingGone(tree: SourceTree, rules: readonly OwnedRule[] = OWNED_RULES): string[] {
  return rules.flatMap((owned) =>
    (owned.pending ?? [])
      .filter(
        (file) =>
          !codeOf(tree.get(file) ?? '')
            .split('\n')
            .some((line) => owned.pattern.test(line)),
      )
      .map((file) => `${file}: ${owned.rule}`),
  );
}

/** Lines of tests that hold a run's duration to a bound (`expect(Date.now() - started).toBeLessThan(…)`): speed is the benchmark's. */
export function timedExpectations(tests: SourceTree): string[] {
  const timed = /expect\(\s*\(?\s*(?:Date\.now\(\)|performance\.now\(\)|process\.hrtime(?:\.bigint)?\(\))\s*-/;
  return [...tests].flatMap(([file, text]) =>
    codeOf(text)
      .split('\n')
      .flatMap((line, i) => (timed.test(line) ? [`${file}:${i + 1}`] : [])),
  );
}

/**
 * Exports nothing uses: a value (function, class, constant) a file of src/
 * exports, declared there or re-exported by name, that no other file of
 * `tree` or `users` imports, directly or through a re-export, and that no
 * public entry (PUBLIC_ENTRIES) offers. Types and typed errors are left out:
 * a type a signature names, an error class a caller may catch, is part of
 * its module's API.
 */
export function unusedExports(tree: SourceTree, users: SourceTree = new Map(), entries = PUBLIC_ENTRIES): string[] {
  const imports = new Map([...tree.keys()].map((file) => [file, importsOf(tree, file)]));
  const lookup = new Map([...tree, ...users]);
  const userImports = [...users.keys()].map((file) => importsOf(lookup, file));
  const local = new Map([...tree].map(([file, text]) => [file, localExportsOf(text)]));
  /** The names a file exports, and where each comes from (itself, or the file and name it re-exports). */
  const exportsMemo = new Map<string, Map<string, { file: string; name: string } | 'local'>>();
  const exportsOf = (file: string, seen = new Set<string>()): Map<string, { file: string; name: string } | 'local'> => {
    const memo = exportsMemo.get(file);
    if (memo) return memo;
    const result = new Map<string, { file: string; name: string } | 'local'>();
    if (seen.has(file)) return result;
    seen.add(file);
    for (const name of local.get(file) ?? []) result.set(name, 'local');
    for (const i of imports.get(file) ?? []) {
      if (!i.reexport) continue;
      if (i.names === '*') {
        for (const name of exportsOf(i.target, seen).keys()) if (name !== 'default' && !result.has(name)) result.set(name, { file: i.target, name });
      } else for (const n of i.names) result.set(n.local, { file: i.target, name: n.imported });
    }
    exportsMemo.set(file, result);
    return result;
  };
  const used = new Set<string>();
  const use = (file: string, name: string): void => {
    const key = `${file}#${name}`;
    if (used.has(key)) return;
    used.add(key);
    const source = exportsOf(file).get(name);
    if (source !== undefined && source !== 'local') use(source.file, source.name);
  };
  for (const list of [...imports.values(), ...userImports]) {
    for (const i of list) {
      if (i.reexport) continue;
      if (i.names === '*') for (const name of exportsOf(i.target).keys()) use(i.target, name);
      else for (const n of i.names) use(i.target, n.imported);
    }
  }
  for (const [file, names] of Object.entries(entries)) {
    if (!tree.has(file)) continue;
    for (const name of names === 'all' ? exportsOf(file).keys() : names) use(file, name);
  }
  // A typed error is part of its module's contract, as a type is: a caller may catch it by its class.
  const bases = new Map(
    [...tree.values()].flatMap((text) => [...codeOf(text).matchAll(/\bclass\s+([\w$]+)\s+extends\s+([\w$.]+)/g)].map((m) => [m[1]!, m[2]!] as const)),
  );
  const isErrorClass = (name: string, depth = 0): boolean => {
    const base = bases.get(name);
    return base !== undefined && depth < 20 && (/Error$/.test(base) || isErrorClass(base, depth + 1));
  };
  const values = new Map([...tree].map(([file, text]) => [file, new Set(localExportsOf(text, false).filter((name) => !isErrorClass(name)))]));
  const isValue = (file: string, name: string, depth = 0): boolean => {
    const source = exportsOf(file).get(name);
    if (source === undefined || depth > 20) return false;
    return source === 'local' ? (values.get(file)?.has(name) ?? false) : isValue(source.file, source.name, depth + 1);
  };
  const found: string[] = [];
  for (const file of tree.keys()) {
    for (const [name, source] of exportsOf(file)) {
      const named = source === 'local' || (imports.get(file) ?? []).some((i) => i.reexport && i.names !== '*' && i.names.some((n) => n.local === name));
      if (named && isValue(file, name) && !used.has(`${file}#${name}`)) found.push(`${file}: ${name}`);
    }
  }
  return found;
}

/** The rows of docs/architecture.md's "Dependency direction" diagram, top to bottom. */
export function layersOfPage(page: string): string[][] {
  const section = page.slice(page.indexOf('## Dependency direction'));
  const diagram = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return diagram
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) =>
      line
        .replace(/^[\s└─]*/, '')
        .replace(/\s{2,}\(.*$/, '')
        .split('·')
        .map((name) => name.trim())
        .filter((name) => name !== ''),
    );
}

export const SRC_ROOT = join(dirname(new URL(import.meta.url).pathname), '../../src');
