/**
 * The shape docs/architecture.md describes, checked on the source (the rules
 * are in ./structure.ts, each also shown failing on a small made-up tree): no
 * import cycle between files, imports down the page's layers and into another
 * folder only through its index.ts, no exported value nothing uses, the
 * public plugin API self-contained, tarball paths spelled only by the layout
 * module, no TLS client in the commands the `flotilla` entry starts without
 * NODE_EXTRA_CA_CERTS, temporary folders made only by src/files, and each
 * rule that has one owner defined nowhere else.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS_WITHOUT_TLS } from '../../src/cli/commands/index.js';
import {
  codeOf,
  deepImports,
  importCycles,
  importGraph,
  LAYERS,
  layeringViolations,
  layersOfPage,
  narrowUseBreaches,
  OWNED_RULES,
  pendingGone,
  readSourceTree,
  secondOwners,
  tempFolderMakers,
  timedExpectations,
  unusedExports,
  type SourceTree,
} from './structure.js';

const ROOT = resolve(__dirname, '../..');
const tree = readSourceTree(resolve(ROOT, 'src'));
const graph = importGraph(tree);
const files = [...tree.keys()];

/** The tests and the default app's plugins, named from src/ (`../test/…`): what they import is used too. */
const users: SourceTree = new Map(
  ['test', 'plugins'].flatMap((dir) => [...readSourceTree(resolve(ROOT, dir))].map(([file, text]) => [`../${dir}/${file}`, text] as const)),
);

/** What a file loads from outside flotilla (Node's modules, packages): imported, static or dynamic, or required. */
function packagesOf(file: string): string[] {
  const text = tree.get(file) ?? '';
  return [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s+['"]([^.'"][^'"]*)['"]/g),
    ...text.matchAll(/(?:^|\n)\s*import\s+['"]([^.'"][^'"]*)['"]/g),
    ...text.matchAll(/(?<![\w$.])(?:import|require|load)\(\s*['"]([^.'"][^'"]*)['"]\s*\)/g),
  ].map((m) => m[1]!);
}

/** Whether a file's code (not its comments) calls a client global Node gives without an import. */
function usesGlobalClient(file: string): boolean {
  const code = codeOf(tree.get(file) ?? '');
  return /(?<![\w$.])(fetch|WebSocket|EventSource)\s*\(|new\s+(WebSocket|EventSource)\b/.test(code);
}

/** A made-up tree: each file's text. */
const made = (files: Record<string, string>): SourceTree => new Map(Object.entries(files));

describe('source structure', () => {
  it('has no import cycle between files', () => {
    expect(importCycles(tree)).toEqual([]);
    // The rule sees one when there is one.
    expect(importCycles(made({ 'a/x.ts': "import { y } from './y.js';", 'a/y.ts': "export { x } from './x.js';" }))).toEqual(['a/x.ts → a/y.ts → a/x.ts']);
  });

  it('imports down the layers docs/architecture.md draws, and sideways only where the page says', () => {
    expect(layersOfPage(readFileSync(resolve(ROOT, 'docs/architecture.md'), 'utf8'))).toEqual(LAYERS.map((row) => row.filter((folder) => folder !== '.')));
    expect(layeringViolations(tree)).toEqual([]);
    // Up, sideways without leave, or from a folder the page does not place: each is found.
    const broken = made({
      'files/index.ts': "import { session } from '../session/index.js';",
      'session/index.ts': "import { kube } from '../kube/index.js';",
      'kube/index.ts': 'export const kube = 1;',
      'charts/index.ts': "import { bundle } from '../tarball/index.js';",
      'tarball/index.ts': "import { charts } from '../charts/index.js';",
      'attic/index.ts': "import { files } from '../files/index.js';",
      'plugins/api.ts': 'export const api = 1;',
      'names/index.ts': "import { api } from '../plugins/api.js';",
    });
    expect(layeringViolations(broken)).toEqual([
      'files/index.ts imports session/index.ts: files is below session',
      'session/index.ts imports kube/index.ts: session and kube share a row and session may not use kube',
      'tarball/index.ts imports charts/index.ts: tarball and charts share a row and tarball may not use charts',
      'attic/index.ts: its folder attic is in no row of the layers',
    ]);
  });

  it("imports another folder's files only through its index.ts", () => {
    expect(deepImports(tree)).toEqual([]);
    const broken = made({
      'files/index.ts': "export { userCacheDir } from './user-cache.js';",
      'files/user-cache.ts': 'export const userCacheDir = 1;',
      'cache/seal.ts': "import { userCacheDir } from '../files/user-cache.js';\nimport { folderProblem } from './folder.js';",
      'cache/folder.ts': "import { userCacheDir } from '../files/index.js';",
    });
    expect(deepImports(broken)).toEqual(['cache/seal.ts imports files/user-cache.ts, past files/index.ts']);
  });

  it('reaches the cluster from the lifecycle only through the interfaces it declares (src/lifecycle/cluster.ts)', () => {
    expect(narrowUseBreaches(tree)).toEqual([]);
    // A client call, the client itself, the client library, or all of kube at once: each is found.
    const broken = made({
      'kube/index.ts': "export { kubeCall, type KubeClient, type KubeObject, Conflict } from './retry.js';",
      'kube/retry.ts': 'export const kubeCall = 1;\nexport const Conflict = 1;\nexport interface KubeClient {}\nexport interface KubeObject {}',
      'lifecycle/record.ts': "import { kubeCall, type KubeClient, type KubeObject, Conflict } from '../kube/index.js';",
      'lifecycle/config.ts': "import type { V1ConfigMap } from '@kubernetes/client-node';\nimport * as kube from '../kube/index.js';",
      'build/index.ts': "import { kubeCall } from '../kube/index.js';",
    });
    expect(narrowUseBreaches(broken)).toEqual([
      'lifecycle/record.ts imports kubeCall from kube: lifecycle may not use it',
      'lifecycle/record.ts imports KubeClient from kube: lifecycle may not use it',
      'lifecycle/config.ts imports all of kube/index.ts: lifecycle may take only some names of kube',
      'lifecycle/config.ts imports @kubernetes/client-node: lifecycle may not use it',
    ]);
  });

  it('reads YAML only through src/yaml', () => {
    const readers = /import\s*\{([^}]*)\}\s*from\s*'(yaml|js-yaml)'/g;
    const offenders = files
      .filter((f) => !f.startsWith('yaml/'))
      .flatMap((f) =>
        [...(tree.get(f) ?? '').matchAll(readers)]
          .filter((m) =>
            m[1]!
              .split(',')
              .some((n) => /^\s*(parse|parseDocument|parseAllDocuments|parseEvents|constructFromEvents|load|loadAll|Parser|Composer|Lexer)\s*$/.test(n)),
          )
          .map(() => f),
      );
    expect(offenders).toEqual([]);
  });

  it('makes temporary folders only through the helper in src/files (0700, removed on exit and on a signal)', () => {
    expect(tempFolderMakers(tree)).toEqual([]);
    const broken = made({
      'files/temp.ts': "import { mkdtempSync } from 'node:fs';\nexport const makeTempDir = () => mkdtempSync('x');",
      'build/scratch.ts': "import { mkdtemp } from 'node:fs/promises';\n// mkdtemp named in a comment is no maker\nawait mkdtemp('y');",
    });
    expect(tempFolderMakers(broken)).toEqual(['build/scratch.ts:1', 'build/scratch.ts:3']);
  });

  it('exports no value that nothing imports (the package entries and what the build scripts load aside)', () => {
    expect(unusedExports(tree, users)).toEqual([]);
    const broken = made({
      'flux/index.ts': "export { overridesValuesFrom, overridesSecret } from './overrides.js';\nexport * from './names.js';",
      'flux/overrides.ts': 'export function overridesValuesFrom() {}\nexport function overridesSecret() {}\nexport interface OverridesSecret {}',
      'flux/names.ts': 'export const FLUX_VERSIONS = [];\nexport const isReady = () => true;',
      'lifecycle/apply.ts': "import { overridesValuesFrom, FLUX_VERSIONS } from '../flux/index.js';",
    });
    // A test's import counts as a use.
    expect(unusedExports(broken, made({ '../test/flux.test.ts': "import { isReady } from '../src/flux/index.js';" }))).toEqual([
      'flux/index.ts: overridesSecret',
      'flux/overrides.ts: overridesSecret',
    ]);
    expect(unusedExports(broken)).toEqual(['flux/index.ts: overridesSecret', 'flux/overrides.ts: overridesSecret', 'flux/names.ts: isReady']);
  });

  it('defines each rule with one owner only there (OWNED_RULES)', () => {
    expect(secondOwners(tree)).toEqual([]);
    expect(pendingGone(tree)).toEqual([]);
    // A second definition of each rule, in a made-up tree, is found at its line; its owner's is not.
    const broken = made({
      'values/merge.ts': "import merge from 'deepmerge';",
      'app/releases.ts': "import merge from 'deepmerge';",
      'lifecycle/readiness.ts': "const ready = condition(release, 'Ready');",
      'verify/ready.ts': "// 'Ready' in a comment is no reading\nconst ok = release.status.conditions.find((c) => c.type === 'Ready');",
      'lifecycle/version.ts': 'const namespace = app.metadata.namespace ?? mostUsed(app.releases);',
      'lifecycle/render.ts': 'const url = `http://controller:8080/helm_charts/${repo}`;',
      'build/chart-cache.ts': "import { createHmac } from 'node:crypto';",
      'cli/options.ts': 'export class UsageError extends FlotillaError {}',
      'cli/commands/cluster-options.ts':
        "export class ClusterUsageError extends FlotillaError {}\nthrow new OverrideUsageError('x');\nprocess.stderr.write('x');",
      'cli/commands/list.ts': "console.log(JSON.stringify({ apiVersion: 'flotilla/v1', kind: 'AppList' }));",
    });
    expect(secondOwners(broken, OWNED_RULES)).toEqual([
      `app/releases.ts:1: ${OWNED_RULES[0]!.rule}`,
      `verify/ready.ts:2: ${OWNED_RULES[1]!.rule}`,
      `lifecycle/version.ts:1: ${OWNED_RULES[2]!.rule}`,
      `lifecycle/render.ts:1: ${OWNED_RULES[3]!.rule}`,
      `build/chart-cache.ts:1: ${OWNED_RULES[4]!.rule}`,
      `cli/commands/cluster-options.ts:1: ${OWNED_RULES[5]!.rule}`,
      `cli/commands/cluster-options.ts:2: ${OWNED_RULES[5]!.rule}`,
      `cli/commands/cluster-options.ts:3: ${OWNED_RULES[6]!.rule}`,
      `cli/commands/list.ts:1: ${OWNED_RULES[6]!.rule}`,
      `cli/commands/list.ts:1: ${OWNED_RULES[7]!.rule}`,
    ]);
    // A pending file that no longer holds a second definition is named, so the list is emptied as the code is.
    const pending = [{ rule: 'r', pattern: /'Ready'/, owners: ['lifecycle/readiness.ts'], pending: ['lifecycle/releases.ts'] }];
    expect(secondOwners(made({ 'lifecycle/releases.ts': "condition(o, 'Ready')" }), pending)).toEqual([]);
    expect(pendingGone(made({ 'lifecycle/releases.ts': 'readiness(o)' }), pending)).toEqual(['lifecycle/releases.ts: r']);
  });

  it("has no test whose pass condition is a wall-clock time (work is counted, speed is the benchmark's)", () => {
    // (This file's made-up trees hold examples of what the rules refuse.)
    expect(timedExpectations(new Map([...users].filter(([file]) => !file.startsWith('../test/architecture/'))))).toEqual([]);
    const broken = made({
      '../test/a.test.ts':
        'const started = Date.now();\nawait run();\nexpect(Date.now() - started).toBeLessThan(5000);\nexpect(print.takenAt).toBeGreaterThanOrEqual(started);',
    });
    expect(timedExpectations(broken)).toEqual(['../test/a.test.ts:3']);
  });

  it('keeps the public plugin API (flotilla/plugin) inside src/plugins', () => {
    const reached = new Set<string>();
    const walk = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const next of graph.get(file) ?? []) walk(next);
    };
    walk('plugins/api.ts');
    expect([...reached].filter((f) => !f.startsWith('plugins/'))).toEqual([]);
  });

  it('names tarball paths only in the layout module', () => {
    const tarballPath = /['"`](?:metadata\.yaml|fluxcd-manifests|checksum\.(?:md5|sha256)(?:\.sig)?|app\/|plugins\/manifest\.json)['"`/]/;
    const offenders = files
      .filter((f) => f !== 'tarball/layout.ts')
      .flatMap((f) =>
        (tree.get(f) ?? '')
          .split('\n')
          .map((line, i) => ({ line, at: `${f}:${i + 1}` }))
          .filter(({ line }) => !/^\s*(\*|\/\/|\/\*)/.test(line) && tarballPath.test(line))
          .map(({ at }) => at),
      );
    expect(offenders).toEqual([]);
  });

  it('keeps every TLS client out of the commands started without NODE_EXTRA_CA_CERTS', () => {
    const registryFile = 'cli/commands/index.ts';
    const registry = tree.get(registryFile) ?? '';
    const moduleOf = new Map(
      [...registry.matchAll(/^\s*'?([a-z-]+)'?: \(\) => import\('(\.\/[a-z-]+)\.js'\)/gm)].map((m) => [m[1]!, `cli/commands/${m[2]!.slice(2)}.ts`]),
    );
    /**
     * The modules of flotilla and the TLS clients a command reaches, by any
     * chain of imports from its module or from the CLI's own (the launcher,
     * the program, the code cache, which every command runs; the program
     * loads only the named command of the registry).
     */
    const tlsReached = (command: string): string[] => {
      const start = moduleOf.get(command);
      if (start === undefined) return [`no command ${command}`];
      const reached = new Set<string>();
      const walk = (file: string): void => {
        // (A generated file's import, written by the code as text, names no source file.)
        if (reached.has(file) || !graph.has(file)) return;
        // The one exception, imported only when a build must fetch a chart dependency its cache lacks: a certificate
        // it cannot trust then gets the hint to run the command with NODE_EXTRA_CA_CERTS (src/cli/output.ts).
        if (file === 'dependencies/fetch.ts') return;
        reached.add(file);
        if (file === registryFile) return;
        for (const next of graph.get(file) ?? []) walk(next);
      };
      for (const file of [start, ...['launch.ts', 'main.ts', 'program.ts', 'code-cache.ts'].map((f) => `cli/${f}`)]) walk(file);
      const clients = /^(node:)?(https|tls|http2)$|^@kubernetes\/client-node$|^undici$/;
      return [...reached].flatMap((f) => [
        ...(/^(oci|kube)\//.test(f) ? [f] : []),
        ...packagesOf(f)
          .filter((p) => clients.test(p))
          .map((p) => `${f} imports ${p}`),
        ...(usesGlobalClient(f) ? [`${f} calls fetch or opens a socket of the web`] : []),
      ]);
    };
    // The walk finds them where they are…
    for (const command of ['push', 'apply', 'images']) expect(tlsReached(command), command).not.toEqual([]);
    // …and nowhere in these.
    expect(COMMANDS_WITHOUT_TLS.length).toBeGreaterThan(0);
    expect(Object.fromEntries(COMMANDS_WITHOUT_TLS.map((command) => [command, tlsReached(command)]))).toEqual(
      Object.fromEntries(COMMANDS_WITHOUT_TLS.map((command) => [command, []])),
    );
  });
});
