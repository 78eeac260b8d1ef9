/**
 * Never a stack trace: through the built CLI, every listed error path ends
 * with exit 1 (input or operation failed) or 2 (usage) and a message naming
 * the file, entry or flag; an unexpected error prints one line and the hint
 * to rerun with --debug.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeTarGz } from '../../src/tarball/index.js';
import { buildApp } from '../../src/build/index.js';
import { reportAndExit } from '../../src/cli/output.js';
import { rawTarGz } from '../tarball/raw-tar.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');
const exec = promisify(execFile);

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function flotilla(...args: string[]): Promise<Run> {
  return exec(process.execPath, [cli, ...args], { cwd: tempDir() }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

/** Exit `code`, no stack trace anywhere, and stderr exactly one line matching `line`. */
function expectOneLine(run: Run, code: 1 | 2, line: RegExp): void {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code, stderr: expect.stringMatching(line) });
  expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  expect(`${run.stdout}${run.stderr}`).not.toMatch(/\n\s+at /);
}

const bundle = (name: string, files: Record<string, string>): string => {
  const path = join(tempDir(), name);
  writeFileSync(path, writeTarGz(Object.entries(files).map(([p, data]) => ({ path: p, data }))));
  return path;
};

describe('every listed error path: exit 1 or 2, one line, no stack', () => {
  it('missing files, folders given as files, names too long for the file system', async () => {
    const dir = join(tempDir(), 'folder.tgz');
    mkdirSync(dir);
    const long = join(tempDir(), `${'n'.repeat(300)}.tgz`);
    expectOneLine(await flotilla('inspect', '/nonexistent/app.tgz'), 1, /^flotilla: \/nonexistent\/app\.tgz: no such file or folder\n$/);
    expectOneLine(await flotilla('inspect', dir), 1, /^flotilla: .*folder\.tgz: is a folder, not a file\n$/);
    expectOneLine(await flotilla('inspect', long), 1, /^flotilla: .*n{300}\.tgz: name too long for the file system\n$/);
    expectOneLine(await flotilla('sign', dir, '--key', '/nonexistent/key.pem'), 1, /^flotilla: \/nonexistent\/key\.pem: no such file or folder\n$/);
    expectOneLine(await flotilla('build', '/nonexistent/app'), 1, /^flotilla: \/nonexistent\/app: no such file or folder\n$/);
    const file = join(tempDir(), 'app.txt');
    writeFileSync(file, 'x');
    expectOneLine(await flotilla('build', file), 1, /^flotilla: .*app\.txt: not a folder \(an app source tree is a folder\)\n$/);
    expectOneLine(await flotilla('releases', tempDir()), 1, /is not a flotilla app: fluxcd\/metadata\.yaml is missing/);
    expectOneLine(await flotilla('import', '/nonexistent/stx', '-d', join(tempDir(), 'out')), 1, /^flotilla: \/nonexistent\/stx does not exist\n$/);
    expectOneLine(
      await flotilla('override', 'set', 'app', 'chart', '-f', '/nonexistent/values.yaml'),
      2,
      /^flotilla: -f \/nonexistent\/values\.yaml: cannot read \(no such file or folder\)\n$/,
    );
    const verified = await flotilla('verify', '/nonexistent/app.tgz');
    expect(verified.code).toBe(1);
    expect(verified.stdout).toBe(
      'verify: /nonexistent/app.tgz: no such file or folder\nplugins: not run (verify stopped before computing values)\n/nonexistent/app.tgz: 1 problem(s)\n',
    );
  });

  it('inspect exits 1 on anything that is not a readable app', async () => {
    const cases: [string, RegExp][] = [
      [bundle('notes.tgz', { 'README.txt': 'hello' }), /^flotilla: notes\.tgz: not a readable application tarball: metadata\.yaml is missing\n$/],
      [
        bundle('bad.tgz', { 'metadata.yaml': 'app_name: [x\n' }),
        /^flotilla: bad\.tgz: not a readable application tarball: metadata\.yaml:\d+:\d+: invalid YAML: /,
      ],
      [
        bundle('anon.tgz', { 'metadata.yaml': 'maintainer: x\n' }),
        /not a readable application tarball: metadata\.yaml does not name app_name and app_version\n$/,
      ],
      [
        bundle('nokust.tgz', { 'metadata.yaml': 'app_name: a\napp_version: "1"\n' }),
        /not a readable application tarball: fluxcd-manifests\/kustomization\.yaml is missing\n$/,
      ],
      [
        bundle('json.tgz', {
          'metadata.yaml': 'app_name: a\napp_version: "1"\n',
          'fluxcd-manifests/kustomization.yaml': 'resources: []\n',
          'plugins/manifest.json': '{"plugins": [\n  {"name": "x",}\n]}',
        }),
        /not a readable application tarball: plugins\/manifest\.json:2:\d+: invalid JSON: /,
      ],
      [
        bundle('chart.tgz', {
          'metadata.yaml': 'app_name: a\napp_version: "1"\n',
          'fluxcd-manifests/kustomization.yaml': 'resources: []\n',
          'charts/web-1.0.0.tgz': 'not gzip',
        }),
        /not a readable application tarball: charts\/web-1\.0\.0\.tgz: .*not a gzip file/,
      ],
    ];
    for (const [path, line] of cases) expectOneLine(await flotilla('inspect', path), 1, line);
    const hostile = join(tempDir(), 'evil.tgz');
    writeFileSync(hostile, rawTarGz([{ name: '../escape', data: 'x' }]));
    expectOneLine(await flotilla('inspect', hostile), 1, /^flotilla: archive rejected \(evil\.tgz\): entry "\.\.\/escape": path has a "\.\." segment\n$/);
  });

  it('bad YAML, bad JSON and invalid schemas in an app name the file and line', async () => {
    const badYaml = writeApp({ 'fluxcd/releases.yaml': 'releases:\n  - name: db\n    chart: [db\n' });
    const yamlRun = await flotilla('build', badYaml, '-d', tempDir());
    expect(yamlRun.code).toBe(1);
    expect(yamlRun.stderr).toMatch(/fluxcd\/releases\.yaml:\d+:\d+: /);
    expect(yamlRun.stderr).not.toMatch(/\n\s+at /);
    expectOneLine(
      await flotilla('build', writeApp({ 'overrides/features.schema.json': '{\n  "type": "object",\n}\n' }), '-d', tempDir()),
      1,
      /^flotilla: overrides\/features\.schema\.json:3:1: invalid JSON: /,
    );
    expectOneLine(
      await flotilla('build', writeApp({ 'overrides/features.schema.json': '{"type": "objekt"}' }), '-d', tempDir()),
      1,
      /^flotilla: overrides\/features\.schema\.json: not a valid JSON Schema \(draft 2020-12\): /,
    );
    expectOneLine(
      await flotilla('build', writeApp({ 'overrides/features.schema.json': '[1]' }), '-d', tempDir()),
      1,
      /^flotilla: overrides\/features\.schema\.json: a JSON Schema must be an object\n$/,
    );
    const keyed = join(tempDir(), 'bad.pem');
    writeFileSync(keyed, 'not a key');
    const built = await buildApp(writeApp(), { outDir: tempDir() });
    expectOneLine(
      await flotilla('sign', built.file, '--key', keyed),
      1,
      /^flotilla: the signing key is not an ed25519 private key in PEM format: expected -----BEGIN PRIVATE KEY----- \(made by: openssl genpkey -algorithm ed25519 -out key.pem\)\n$/,
    );
    const plain = writeApp({ 'overrides/deployment.yaml': 'main: {release: "1.0"\n' });
    const spec = await flotilla('overrides', plain, 'web');
    expect(spec.code).toBe(1);
    expect(spec.stderr).toMatch(/overrides\/deployment\.yaml:\d+:\d+: /);
    expect(spec.stderr).not.toMatch(/\n\s+at /);
  });

  it('a chart Helm would not load (a file over 5 MiB): exit 1 naming the file, and no tarball', async () => {
    const out = join(tempDir(), 'out');
    const app = writeApp({ 'charts/lib/files/big.txt': 'x'.repeat(5 * 1024 * 1024 + 1) });
    expectOneLine(
      await flotilla('build', app, '-d', out),
      1,
      /^flotilla: .*charts\/lib\/files\/big\.txt: 5\.0 MiB \(5242881 bytes\); Helm loads no chart file larger than 5\.0 MiB \(5242880 bytes\), so it would refuse chart "db": /,
    );
    expect(existsSync(join(out, 'demo-1.0-1.tgz'))).toBe(false);
  });

  it('static overrides over the 1 MiB a Secret holds: exit 1 naming the file and the Secret, and no tarball', async () => {
    const out = join(tempDir(), 'out');
    const app = writeApp({ 'overrides/static/web.yaml': `conf:\n  blob: ${'x'.repeat(1024 * 1024)}\n` });
    expectOneLine(
      await flotilla('build', app, '-d', out),
      1,
      /^flotilla: overrides\/static\/web\.yaml: 1\.0 MiB \(1048591 bytes\); release web's static overrides go whole into the Secret web-static-overrides, and the API server stores no more than 1\.0 MiB \(1048576 bytes\) in a Secret\n$/,
    );
    expect(existsSync(join(out, 'demo-1.0-1.tgz'))).toBe(false);
  });

  it('an app_version that would name the tarball outside the output folder: exit 1 naming it, nothing written anywhere', async () => {
    const parent = tempDir();
    const out = join(parent, 'deep', 'out');
    const app = writeApp({ 'fluxcd/metadata.yaml': 'app_name: demo\napp_version: "1/../../../escaped"\nsupported_k8s_version:\n  minimum: v1.29.0\n' });
    expectOneLine(
      await flotilla('build', app, '-d', out),
      1,
      /^flotilla: fluxcd\/metadata\.yaml: app_version "1\/\.\.\/\.\.\/\.\.\/escaped" cannot name the tarball demo-<app_version>\.tgz: expected letters, digits, \., _, \+ and -, at most 128, a letter or digit first\n$/,
    );
    expect(readdirSync(parent)).toEqual([]);
    // The same through a build token: checked as the token made it.
    const tokened = writeApp({ 'fluxcd/metadata.yaml': 'app_name: demo\napp_version: "@V@"\nsupported_k8s_version:\n  minimum: v1.29.0\n' });
    expectOneLine(await flotilla('build', tokened, '-d', out, '--token', 'V=.hidden'), 1, /app_version "\.hidden" cannot name the tarball/);
    expect(readdirSync(parent)).toEqual([]);
  });

  it('a current folder removed after the shell entered it: one line, exit 1, no stack', () => {
    const gone = tempDir();
    const run = spawnSync('sh', ['-c', `cd "$1" && rmdir "$1" && exec "$2" "$3" --version`, 'sh', gone, process.execPath, cli], { encoding: 'utf8' });
    expect([run.status, run.stdout, run.stderr]).toEqual([
      1,
      '',
      'flotilla: the current folder no longer exists (it was removed after this shell entered it); change to another folder\n',
    ]);
  });

  it('special files as -f or --output-dir (a FIFO, a folder, /proc): one line, never a hang or a spin, nothing read echoed', async () => {
    const app = writeApp();
    const fifo = join(tempDir(), 'values.fifo');
    const fifoTarball = join(tempDir(), 'app.tgz');
    execFileSync('mkfifo', [fifoTarball]);
    execFileSync('mkfifo', [fifo]);
    expectOneLine(await flotilla('template', app, '-f', fifo), 2, /^flotilla: -f .*values\.fifo: is not a regular file \(a FIFO, a socket or a device\)\n$/);
    expectOneLine(await flotilla('template', app, '-f', tempDir()), 2, /^flotilla: -f .*: is a folder, not a file\n$/);
    expectOneLine(
      await flotilla('override', 'set', 'app', 'chart', '-f', fifo),
      2,
      /^flotilla: -f .*values\.fifo: cannot read \(is not a regular file \(a FIFO, a socket or a device\)\)\n$/,
    );
    const verified = await flotilla('verify', fifoTarball);
    expect([verified.code, verified.stdout]).toEqual([
      1,
      expect.stringMatching(/^verify: .*app\.tgz: is not a regular file \(a FIFO, a socket or a device\)\n/),
    ]);
    // Node's recursive mkdir retries forever under /proc.
    expectOneLine(await flotilla('template', app, '--output-dir', '/proc/1/x'), 1, /^flotilla: \/proc\/1\/x: no such file or folder\n$/);
    // The environment is NUL-separated: not YAML, refused where it is, and not printed.
    const environ = await flotilla('template', app, '-f', '/proc/self/environ');
    expectOneLine(environ, 1, /^flotilla: .*proc\/self\/environ:1:\d+: invalid YAML: the non-printable character U\+0000 /);
    expect(environ.stderr).not.toContain('PATH=');
  });

  it('masks the password of credentials in a URL (a kubeconfig server https://user:PW@host) in the error it prints', async () => {
    const dir = tempDir();
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://alice:S3cretPW@127.0.0.1:9\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {}\n',
    );
    const run = await flotilla('list', '--kubeconfig', kubeconfig);
    expectOneLine(run, 1, /^flotilla: cannot list Secret in flotilla-system: request to https:\/\/alice:<secret>@127\.0\.0\.1:9\/api\/v1\/.* failed/);
    expect(run.stderr).not.toContain('S3cretPW');
  });

  it('usage errors exit 2 naming the word or flag; help and version exit 0', async () => {
    expectOneLine(await flotilla('inspect'), 2, /^flotilla: missing required argument 'BUNDLE' \(see --help\)\n$/);
    expectOneLine(await flotilla('inspect', 'x.tgz', '--bogus'), 2, /^flotilla: unknown option '--bogus' \(see --help\)\n$/);
    expectOneLine(
      await flotilla('inspect', 'x.tgz', '-o', 'xml'),
      2,
      /^flotilla: option '-o, --output <FORMAT>' argument 'xml' is invalid\. Allowed choices are table, json, yaml\. \(see --help\)\n$/,
    );
    expectOneLine(await flotilla('frobnicate'), 2, /^flotilla: unknown command 'frobnicate' \(see --help\)\n$/);
    expectOneLine(await flotilla('aply'), 2, /^flotilla: unknown command 'aply' \(Did you mean apply\?\) \(see --help\)\n$/);
    expect((await flotilla('--help')).code).toBe(0);
    expect((await flotilla('--version')).code).toBe(0);
  });
});

describe('an unexpected error', () => {
  afterEach(() => vi.restoreAllMocks());

  function report(error: unknown, argv: string[]): { code: number | undefined; stderr: string } {
    let stderr = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr += String(chunk);
      return true;
    });
    let code: number | undefined;
    vi.spyOn(process, 'exit').mockImplementation(((c?: number) => {
      code = c;
      throw new Error('exit');
    }) as never);
    const saved = process.argv;
    process.argv = ['node', 'flotilla', ...argv];
    try {
      reportAndExit(error);
    } catch {
      // the mocked exit
    } finally {
      process.argv = saved;
    }
    return { code, stderr };
  }

  it('prints one line with the hint to rerun with --debug, and the stack only with --debug', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'spec')\n    more detail");
    expect(report(bug, ['verify', 'x.tgz'])).toEqual({
      code: 1,
      stderr: "flotilla: unexpected error: Cannot read properties of undefined (reading 'spec') (rerun with --debug for the stack trace)\n",
    });
    const debug = report(bug, ['verify', 'x.tgz', '--debug']);
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(
      /^TypeError: Cannot read properties[^]*\n\s+at [^]*\nflotilla: unexpected error: Cannot read properties of undefined \(reading 'spec'\)\n$/,
    );
  });

  it('names the path of a file-system error that reaches the top', () => {
    const error = Object.assign(new Error("EACCES: permission denied, open '/srv/app.tgz'"), { code: 'EACCES', path: '/srv/app.tgz' });
    expect(report(error, ['verify'])).toEqual({ code: 1, stderr: 'flotilla: /srv/app.tgz: permission denied\n' });
  });
});
