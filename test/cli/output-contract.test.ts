/**
 * The output contract (docs/output.md): every command of the CLI, listed
 * from the command line's own definition, takes `-o table|json|yaml` (or
 * says in COMMANDS_WITHOUT_DATA why it prints no data), and run with each
 * format prints through its Output — never straight to stdout — a table, or
 * one JSON or YAML document under `apiVersion: flotilla/v1` with the kind
 * and the top-level fields docs/output.md gives it. A new command without
 * a scenario here, or a field the page does not name, fails the test.
 *
 * The commands run in this process against what a user has: an app made by
 * `flotilla init` from a `helm create` chart, a local registry (the dev
 * cluster's Debian docker-registry) holding its image, a StarlingX app to
 * import, and the dev cluster for the lifecycle.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { COMMANDS_WITHOUT_DATA } from '../../src/cli/commands/index.js';
import { OUTPUT_FORMATS } from '../../src/cli/options.js';
import { defineProgram, runCli } from '../../src/cli/program.js';
import { MediaType, OciClient, parseReference } from '../../src/oci/index.js';
import { toolPath } from '../../src/tools/index.js';
import { tempDir } from '../support/app-fixture.js';
import { startDevCluster, type DevCluster } from '../support/dev-cluster/index.js';
import { stxFixture } from '../import/stx-fixture.js';

const execute = promisify(execFile);
const DOC = resolve(import.meta.dirname, '..', '..', 'docs', 'output.md');

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** One command line run in this process, its lines captured; a write past its Output fails the test. */
async function cli(args: readonly string[]): Promise<Ran> {
  const out: string[] = [];
  const err: string[] = [];
  const direct = vi.spyOn(process.stdout, 'write');
  process.exitCode = undefined;
  let code: number;
  try {
    code = await runCli(['node', 'flotilla', ...args], { io: { out: (line) => out.push(line), err: (line) => err.push(line) } });
  } finally {
    direct.mockRestore();
  }
  expect(
    direct.mock.calls.map((c) => String(c[0])),
    `${args.join(' ')} wrote to stdout past its Output`,
  ).toEqual([]);
  const exit = code !== 0 ? code : Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { code: exit, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** docs/output.md's table: command → kind, required and optional top-level fields. */
function documentedKinds(): Map<string, { kind: string; required: Set<string>; optional: Set<string> }> {
  const rows = new Map<string, { kind: string; required: Set<string>; optional: Set<string> }>();
  for (const line of readFileSync(DOC, 'utf8').split('\n')) {
    const cells = /^\| (`[^|]+`) \| `(\w+)` \| (.+) \|$/.exec(line);
    if (!cells) continue;
    const [, commands = '', kind = '', fields = ''] = cells;
    // Top-level fields: the backticked names outside parentheses; a list's entries come after "`items`:".
    let top = fields;
    while (/\([^()]*\)/.test(top)) top = top.replace(/\([^()]*\)/g, '');
    top = top.replace(/`items`:.*$/, '`items`');
    const names = [...top.matchAll(/`([A-Za-z][A-Za-z0-9]*\??)`/g)].map((m) => m[1] ?? '');
    const entry = {
      kind,
      required: new Set(names.filter((n) => !n.endsWith('?'))),
      optional: new Set(names.filter((n) => n.endsWith('?')).map((n) => n.slice(0, -1))),
    };
    for (const command of commands.split(', ')) rows.set(command.replace(/`/g, ''), entry);
  }
  return rows;
}

/** Every command a user can run, as they type it: `images pin`, `list`, `overrides` and `overrides set`, … */
function leafCommands(command: Command, prefix: readonly string[] = []): { path: string; command: Command }[] {
  return command.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    // Commander keeps whether a command runs anything of its own in _actionHandler.
    const runs = sub.commands.length === 0 || (sub as unknown as { _actionHandler: unknown })._actionHandler !== null;
    return [...(runs ? [{ path: path.join(' '), command: sub }] : []), ...leafCommands(sub, path)];
  });
}

/** What a scenario runs: its command (as docs/output.md names it), and the arguments for a format. */
interface Scenario {
  readonly command: string;
  readonly args: (format: string) => readonly string[];
  /** Exit codes that still print data (diff: 1 means changes). */
  readonly codes?: readonly number[];
  /** Runs before each format's run (state the command needs). */
  readonly before?: (format: string) => Promise<void>;
}

describe('the output contract', () => {
  let work: string;
  let app: string;
  let bundle: string;
  let cluster: DevCluster;
  const env = { FLOTILLA_BUILD_SERVER: process.env.FLOTILLA_BUILD_SERVER, FLOTILLA_STATE_DIR: process.env.FLOTILLA_STATE_DIR };

  beforeAll(async () => {
    work = tempDir('flotilla-contract-');
    process.env.FLOTILLA_BUILD_SERVER = '0';
    process.env.FLOTILLA_STATE_DIR = join(work, 'state');
    cluster = await startDevCluster({ requeueDependencyMs: 250 });
    const registry = cluster.registry?.host ?? '';
    await execute(toolPath('helm'), ['create', join(work, 'web')]);
    app = join(work, 'shop');
    expect((await cli(['init', app, '--chart', join(work, 'web'), '--target', 'flux'])).code).toBe(0);
    // An image in the local registry, in a catalog the app turns on, landing as helm create's image.repository + image.tag.
    const image = `${registry}/shop/nginx:1.27`;
    await pushImage(image);
    await pushImage(`${registry}/shop/nginx:1.28`);
    mkdirSync(join(app, 'overrides/versions'));
    writeFileSync(join(app, 'overrides/versions/v1.yaml'), `release: v1\nimages:\n  web: ${image}\n`);
    writeFileSync(join(app, 'overrides/versions/v2.yaml'), `release: v2\nimages:\n  web: ${registry}/shop/nginx:1.28\n`);
    writeFileSync(join(app, 'overrides/versions/images.yaml'), 'web:\n  web: {repository: image.repository, tag: image.tag}\n');
    writeFileSync(join(app, 'overrides/deployment.yaml'), 'main:\n  release: v1\nfeatures:\n  services: [web]\n');
    writeFileSync(join(work, 'policy.yaml'), '"admin": "role:admin"\n"get": "rule:admin"\n');
    const key = generateKeyPairSync('ed25519');
    writeFileSync(join(work, 'key.pem'), key.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const built = await cli(['build', app, '-d', join(work, 'out'), '-o', 'json']);
    expect(built.code, built.stderr).toBe(0);
    bundle = (JSON.parse(built.stdout) as { file: string }).file;
  }, 300_000);

  afterAll(async () => {
    await cluster?.stop();
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  async function pushImage(reference: string): Promise<void> {
    const client = new OciClient({ credentials: { credentialFor: () => undefined } });
    const repo = parseReference(reference);
    const json = (value: unknown) => Buffer.from(JSON.stringify(value));
    const config = await client.pushBlob(repo, json({ architecture: 'amd64', os: 'linux' }), 'application/vnd.oci.image.config.v1+json');
    const layer = await client.pushBlob(repo, Buffer.from('layer'), 'application/vnd.oci.image.layer.v1.tar+gzip');
    await client.pushManifest(repo, json({ schemaVersion: 2, mediaType: MediaType.ociManifest, config, layers: [layer] }), MediaType.ociManifest);
  }

  /** The app at another app_version, built: what `update` takes. */
  async function builtAt(version: string, edit?: (copy: string) => void): Promise<string> {
    const copy = join(work, `shop-${version}`);
    cpSync(app, copy, { recursive: true });
    edit?.(copy);
    const metadata = join(copy, 'fluxcd/metadata.yaml');
    writeFileSync(metadata, readFileSync(metadata, 'utf8').replace(/^app_version: .*$/m, `app_version: ${version}`));
    const built = await cli(['build', copy, '-d', join(work, `out-${version}`), '-o', 'json']);
    expect(built.code, built.stderr).toBe(0);
    return (JSON.parse(built.stdout) as { file: string }).file;
  }

  it("diff's failure names the release and the side that failed to render", async () => {
    const kube = ['--kubeconfig', cluster.kubeconfigPath];
    expect((await cli(['upload', bundle, ...kube])).code).toBe(0);
    try {
      // A template that builds (build runs no helm template) and fails when rendered.
      const broken = await builtAt('0.1.0-9', (copy) =>
        writeFileSync(join(copy, 'charts/web/templates/broken.yaml'), '{{ fail "the web front end needs a port" }}\n'),
      );
      const diff = await cli(['diff', 'shop', broken, ...kube]);
      expect(diff.code).toBe(2);
      expect(diff.stderr).toMatch(
        /^flotilla: release web: rendering version 0\.1\.0-9 failed: helm template failed \(exit 1\): Error: execution error at \(web\/templates\/broken\.yaml:1:3\): the web front end needs a port$/,
      );
    } finally {
      await cli(['delete', 'shop', ...kube]);
    }
  }, 300_000);

  it('every command takes -o table|json|yaml, or says why it prints no data', async () => {
    const program = await defineProgram({ io: { out: () => undefined, err: () => undefined } });
    const leaves = leafCommands(program);
    expect(leaves.length).toBeGreaterThan(30);
    for (const { path, command } of leaves) {
      const output = command.options.find((o) => o.long === '--output');
      if (path in COMMANDS_WITHOUT_DATA) {
        expect(output, `${path} prints no data (${COMMANDS_WITHOUT_DATA[path]}) yet takes -o`).toBeUndefined();
        continue;
      }
      expect(output?.short, `${path}: -o`).toBe('-o');
      expect(output?.argChoices?.slice(0, 3), `${path}: -o's formats`).toEqual([...OUTPUT_FORMATS]);
    }
    for (const path of Object.keys(COMMANDS_WITHOUT_DATA))
      expect(
        leaves.map((l) => l.path),
        `COMMANDS_WITHOUT_DATA names ${path}`,
      ).toContain(path);
  });

  it('bad -o values get the same message from every command, exit 2', async () => {
    const program = await defineProgram({ io: { out: () => undefined, err: () => undefined } });
    for (const { path } of leafCommands(program).filter((l) => !(l.path in COMMANDS_WITHOUT_DATA))) {
      const ran = await cli([...path.split(' '), '-o', 'xml']);
      expect({ path, code: ran.code, stderr: ran.stderr }).toEqual({
        path,
        code: 2,
        stderr: `flotilla: option '-o, --output <FORMAT>' argument 'xml' is invalid. Allowed choices are ${OUTPUT_FORMATS.join(', ')}${path === 'overrides' ? ', values' : path === 'policy matrix' ? ', csv' : ''}. (see --help)`,
      });
    }
  });

  it('every command prints its data in each format as docs/output.md says', async () => {
    const kube = ['--kubeconfig', cluster.kubeconfigPath];
    const stx = await stxFixture();
    const registry = cluster.registry?.host ?? '';
    const updates = new Map<string, string>();
    for (const [format, version] of [
      ['table', '0.1.0-2'],
      ['json', '0.1.0-3'],
      ['yaml', '0.1.0-4'],
    ] as const)
      updates.set(format, await builtAt(version));
    // Updates staged in one phase that a new image of the target release (v2) changes, held before it: what `version continue` releases.
    const staged = new Map<string, string>();
    for (const [format, version, tag] of [
      ['table', '0.1.0-5', '1.29'],
      ['json', '0.1.0-6', '1.30'],
      ['yaml', '0.1.0-7', '1.31'],
    ] as const) {
      staged.set(
        format,
        await builtAt(version, (copy) => {
          writeFileSync(join(copy, 'overrides/versions/v2.yaml'), `release: v2\nimages:\n  web: ${registry}/shop/nginx:${tag}\n`);
          writeFileSync(
            join(copy, 'fluxcd/releases.yaml'),
            `${readFileSync(join(copy, 'fluxcd/releases.yaml'), 'utf8')}updatePhases:\n  - name: front\n    rest: true\n`,
          );
        }),
      );
    }
    const copyOf = (format: string, name: string) => join(work, `${name}-${format}`);
    const scenarios: Scenario[] = [
      { command: 'init', args: (f) => ['init', copyOf(f, 'init'), '--chart', join(work, 'web'), '--target', 'flux'] },
      { command: 'releases', args: () => ['releases', app] },
      { command: 'overrides', args: () => ['overrides', app, 'web'] },
      { command: 'overrides --explain', args: () => ['overrides', app, 'web', '--explain'] },
      { command: 'overrides --all', args: (f) => ['overrides', app, '--all', '-d', copyOf(f, 'exported')] },
      { command: 'overrides set', args: () => ['overrides', 'set', app, 'web', 'replicaCount=2'] },
      {
        command: 'overrides unset',
        args: () => ['overrides', 'unset', app, 'web', 'replicaCount'],
        before: async () => void (await cli(['overrides', 'set', app, 'web', 'replicaCount=2'])),
      },
      { command: 'preflight', args: () => ['preflight', app] },
      { command: 'build', args: () => ['build', app, '-d', join(work, 'out')] },
      { command: 'verify', args: () => ['verify', bundle] },
      { command: 'inspect', args: () => ['inspect', bundle] },
      { command: 'sign', args: () => ['sign', bundle, '--key', join(work, 'key.pem')] },
      { command: 'push', args: () => ['push', bundle, `oci://${registry}/apps/shop`] },
      { command: 'import', args: (f) => ['import', stx.dir, '-d', copyOf(f, 'imported'), ...stx.charts.flatMap((c) => ['--charts', c])] },
      { command: 'starlingx export', args: (f) => ['starlingx', 'export', app, '-d', copyOf(f, 'platform')] },
      { command: 'plugin new', args: (f) => ['plugin', 'new', copyOf(f, 'init'), 'web'] },
      { command: 'plugin check', args: () => ['plugin', 'check', app] },
      { command: 'plugin list', args: () => ['plugin', 'list', app] },
      { command: 'policy lint', args: () => ['policy', 'lint', app] },
      { command: 'policy check', args: () => ['policy', 'check', join(work, 'policy.yaml'), '--action', 'get', '--roles', 'admin'] },
      { command: 'policy matrix', args: () => ['policy', 'matrix', join(work, 'policy.yaml'), '--roles', 'admin,member'] },
      { command: 'bump', args: () => ['bump', app, '--app-version', '--dry-run'] },
      { command: 'images list', args: () => ['images', 'list', app] },
      { command: 'images bump', args: () => ['images', 'bump', app, '--field', `web=${registry}/shop/nginx:1.28`, '--dry-run'] },
      { command: 'images pin', args: () => ['images', 'pin', app, '--dry-run'] },
      { command: 'images pin --check', args: () => ['images', 'pin', app, '--check'] },
      { command: 'build-server status', args: () => ['build-server', 'status'] },
      { command: 'build-server stop', args: () => ['build-server', 'stop'] },
      // The lifecycle, each format in turn: every operation leaves what the next needs.
      { command: 'upload', args: () => ['upload', bundle, ...kube], before: async (f) => void (f !== 'table' && (await cli(['delete', 'shop', ...kube]))) },
      { command: 'delete', args: () => ['delete', 'shop', ...kube], before: async (f) => void (f !== 'table' && (await cli(['upload', bundle, ...kube]))) },
      {
        command: 'apply',
        args: () => ['apply', 'shop', '--timeout', '3m', ...kube],
        before: async (f) => void (f === 'table' && (await cli(['upload', bundle, ...kube]))),
      },
      { command: 'list', args: () => ['list', ...kube] },
      { command: 'show', args: () => ['show', 'shop', ...kube] },
      { command: 'version status', args: () => ['version', 'status', 'shop', ...kube] },
      // v2, back to v1 (a downgrade: --force), v2 again.
      { command: 'version target', args: (f) => ['version', 'target', 'shop', ...(f === 'json' ? ['v1', '--force'] : ['v2']), ...kube] },
      { command: 'version image set', args: () => ['version', 'image', 'set', 'shop', 'web', `${registry}/shop/nginx:1.28`, '--resolve', ...kube] },
      { command: 'version image list', args: () => ['version', 'image', 'list', 'shop', ...kube] },
      {
        command: 'version image unset',
        args: () => ['version', 'image', 'unset', 'shop', 'web', ...kube],
        before: async (f) =>
          void (f !== 'table' && (await cli(['version', 'image', 'set', 'shop', 'web', `${registry}/shop/nginx:1.28`, '--resolve', ...kube]))),
      },
      { command: 'override set', args: () => ['override', 'set', 'shop', 'web', '--set', 'replicaCount=2', ...kube] },
      { command: 'override show', args: () => ['override', 'show', 'shop', 'web', ...kube] },
      { command: 'diff', args: () => ['diff', 'shop', ...kube], codes: [0, 1] },
      { command: 'override delete', args: () => ['override', 'delete', 'shop', 'web', ...kube] },
      { command: 'update', args: (f) => ['update', updates.get(f) ?? '', '--timeout', '3m', ...kube] },
      {
        command: 'version continue',
        args: () => ['version', 'continue', 'shop', '--phase', 'front', '--timeout', '3m', ...kube],
        before: async (f) => {
          const held = await cli(['update', staged.get(f) ?? '', '--hold', 'front', '--timeout', '3m', ...kube]);
          expect(held.stdout, held.stderr).toContain('held before update phase front');
        },
      },
      {
        command: 'remove',
        args: () => ['remove', 'shop', ...kube],
        before: async (f) => void (f !== 'table' && (await cli(['apply', 'shop', '--timeout', '3m', ...kube]))),
      },
      // A run that left the app applying and is gone (apply --no-wait returns at once): abort closes it.
      { command: 'abort', args: () => ['abort', 'shop', ...kube], before: async () => void (await cli(['apply', 'shop', '--no-wait', ...kube])) },
    ];

    const program = await defineProgram({ io: { out: () => undefined, err: () => undefined } });
    const documented = documentedKinds();
    const covered = new Set(scenarios.map((s) => s.command));
    for (const { path } of leafCommands(program)) {
      if (!(path in COMMANDS_WITHOUT_DATA)) expect(covered, `${path} has no scenario here (and a row in docs/output.md)`).toContain(path);
    }

    for (const scenario of scenarios) {
      const row = documented.get(scenario.command);
      expect(row, `docs/output.md has no row for ${scenario.command}`).toBeDefined();
      for (const format of OUTPUT_FORMATS) {
        await scenario.before?.(format);
        const args = [...scenario.args(format), '-o', format];
        const ran = await cli(args);
        const what = `${args.join(' ')}\n${ran.stderr}`;
        expect(scenario.codes ?? [0], what).toContain(ran.code);
        if (format === 'table') {
          expect(ran.stdout, what).not.toMatch(/^(\{|apiVersion:)/);
          continue;
        }
        let printed: Record<string, unknown> = {};
        expect(
          () => (printed = (format === 'json' ? JSON.parse(ran.stdout) : load(ran.stdout)) as Record<string, unknown>),
          `${what}\n${ran.stdout}`,
        ).not.toThrow();
        expect(Object.keys(printed).slice(0, 2), what).toEqual(['apiVersion', 'kind']);
        expect(printed.apiVersion, what).toBe('flotilla/v1');
        expect(printed.kind, what).toBe(row?.kind);
        const fields = Object.keys(printed).slice(2);
        for (const field of row?.required ?? []) expect(fields, `${what}: documented field ${field}`).toContain(field);
        for (const field of fields) expect(row?.required.has(field) || row?.optional.has(field), `${what}: ${field} is not in docs/output.md`).toBe(true);
      }
    }
  }, 900_000);
});
