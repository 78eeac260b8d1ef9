/**
 * The build server as a user meets it: the shipped CLI, one-shot
 * `flotilla build` processes, a server started by the first of them. What a
 * served build prints, exits with and writes is what a build in its own
 * process does; a server that is gone, foreign or of another environment is
 * never used.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, writeApp } from '../support/app-fixture.js';

const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** One user's cache folder, so servers are this test's alone. */
function user() {
  const cacheDir = tempDir('flotilla-server-user-');
  const env = (server: string | undefined, extra: Record<string, string> = {}) => {
    const env: NodeJS.ProcessEnv = { ...process.env, FLOTILLA_CACHE_DIR: cacheDir, ...extra };
    if (server === undefined) delete env.FLOTILLA_BUILD_SERVER;
    else env.FLOTILLA_BUILD_SERVER = server;
    return env;
  };
  const run = (args: readonly string[], options: { server?: string; cwd?: string; extra?: Record<string, string> } = {}): Run => {
    const result = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', cwd: options.cwd, env: env(options.server, options.extra) });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const servers = (): { pid: number; commandsRun: number; apps: string[]; socket: string; warmedUp: boolean; warmUp: string }[] =>
    (JSON.parse(run(['build-server', 'status', '-o', 'json']).stdout) as { items: never[] }).items;
  const waitForServer = async () => {
    for (let i = 0; i < 200 && servers().length === 0; i++) await new Promise((done) => setTimeout(done, 50));
    const [server] = servers();
    if (!server) throw new Error('no build server started');
    return server;
  };
  return { cacheDir, env, run, servers, waitForServer };
}

const users: ReturnType<typeof user>[] = [];
afterEach(() => {
  for (const u of users.splice(0)) u.run(['build-server', 'stop']);
});
const newUser = () => {
  const u = user();
  users.push(u);
  return u;
};

/** The build's JSON report without what differs by where it was written. */
function report(run: Run): unknown {
  expect(run.status, run.stderr).toBe(0);
  const { file: _file, charts, ...rest } = JSON.parse(run.stdout) as { file: string; charts: { reused: boolean }[] };
  return { ...rest, charts: charts.map(({ reused: _reused, ...chart }) => chart) };
}

describe('the build server', () => {
  it('is started by a build, serves the next ones, and they write what a build in its own process writes', async () => {
    const u = newUser();
    const app = writeApp();
    const out = tempDir();
    expect(u.run(['build', app, '-d', out], { server: '1' }).status).toBe(0);
    const server = await u.waitForServer();
    expect(server.commandsRun).toBe(0);

    const edits: [string, () => void][] = [
      ['nothing', () => {}],
      ['a static override', () => writeFileSync(join(app, 'overrides/static/web.yaml'), 'conf:\n  greeting: served\n')],
      ['a chart template', () => writeFileSync(join(app, 'charts/db/templates/extra.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n')],
      [
        'the release table',
        () => writeFileSync(join(app, 'fluxcd/releases.yaml'), readFileSync(join(app, 'fluxcd/releases.yaml'), 'utf8').replace('timeout: 10m', 'timeout: 20m')),
      ],
    ];
    for (const [index, [what, edit]] of edits.entries()) {
      edit();
      const served = u.run(['build', app, '-d', out, '-o', 'json']);
      const alone = u.run(['build', app, '-d', tempDir(), '-o', 'json', '--no-cache'], { server: '0' });
      expect(report(served), what).toEqual(report(alone));
      expect(served.stderr, what).toBe(alone.stderr);
      expect(u.servers()[0]?.commandsRun, what).toBe(index + 1);
    }
    expect(u.servers()[0]?.apps).toEqual([app]);
    // The table a person reads comes through as well.
    const table = u.run(['build', app, '-d', out]);
    expect(table.stdout).toContain('CHART  VERSION');
    expect(table.stdout).toContain(`${join(out, 'demo-1.0-1.tgz')}\n`);
  });

  it('prepares from the build that started it, in memory: nothing is written until a client asks', async () => {
    const u = newUser();
    const app = writeApp();
    const out = tempDir();
    expect(u.run(['build', app, '-d', out], { server: '1' }).status).toBe(0);
    const tarball = join(out, 'demo-1.0-1.tgz');
    const first = readFileSync(tarball);
    rmSync(tarball);
    await u.waitForServer();
    // Prepared once it keeps the app; it wrote no tarball meanwhile.
    for (let i = 0; i < 200 && (u.servers()[0]?.apps.length ?? 0) === 0; i++) await new Promise((done) => setTimeout(done, 50));
    expect(u.servers()[0]?.apps).toEqual([app]);
    expect(existsSync(tarball)).toBe(false);
    const served = u.run(['build', app, '-d', out, '-o', 'json']);
    expect(served.status, served.stderr).toBe(0);
    expect(readFileSync(tarball).equals(first)).toBe(true);
    expect(u.servers()[0]?.commandsRun).toBe(1);
  });

  it('warms up once quiet, building the app from nothing in memory: it writes nothing, in the output folder or the app', async () => {
    const u = newUser();
    const app = writeApp();
    const out = tempDir();
    // Without a cache the build writes its tarball only: whatever else lands in the folder afterwards was written by the server.
    expect(u.run(['build', app, '-d', out, '--no-cache'], { server: '1' }).status).toBe(0);
    rmSync(join(out, 'demo-1.0-1.tgz'));
    const listing = (dir: string) =>
      readdirSync(dir, { recursive: true, withFileTypes: true })
        .map((e) => `${join(e.parentPath, e.name)} ${e.isFile() ? statSync(join(e.parentPath, e.name)).mtimeMs : ''}`)
        .sort();
    const appBefore = listing(app);
    await u.waitForServer();
    for (let i = 0; i < 200 && !u.servers()[0]?.warmedUp; i++) await new Promise((done) => setTimeout(done, 50));
    expect(u.servers()[0]?.warmedUp).toBe(true);
    // warmedUp is set once the warm-up's build has ended: nothing it would write can come later.
    expect(readdirSync(out)).toEqual([]);
    expect(listing(app)).toEqual(appBefore);
    expect(u.servers()[0]?.commandsRun).toBe(0);
    const served = u.run(['build', app, '-d', out, '--no-cache']);
    expect(served.status, served.stderr).toBe(0);
    expect(u.servers()[0]?.commandsRun).toBe(1);
  });

  it('warms up by really building: an app broken after the first build leaves the server not warmed up', async () => {
    const u = newUser();
    const app = writeApp();
    expect(u.run(['build', app, '-d', tempDir(), '--no-cache'], { server: '1' }).status).toBe(0);
    writeFileSync(join(app, 'fluxcd', 'metadata.yaml'), 'app_name: [broken\n');
    await u.waitForServer();
    // Until the warm-up has ended: one that built nothing would say it was done.
    for (let i = 0; i < 400 && ['waiting', 'started'].includes(u.servers()[0]?.warmUp ?? 'waiting'); i++) await new Promise((done) => setTimeout(done, 25));
    expect(u.servers()[0]).toMatchObject({ warmUp: 'failed', warmedUp: false });
  });

  it("takes relative paths from the client's folder", async () => {
    const u = newUser();
    const app = writeApp();
    expect(u.run(['build', '.', '-d', 'first'], { server: '1', cwd: app }).status).toBe(0);
    await u.waitForServer();
    const served = u.run(['build', '.', '-d', 'out'], { cwd: app });
    expect(served.status, served.stderr).toBe(0);
    expect(u.servers()[0]?.commandsRun).toBe(1);
    expect(existsSync(join(app, 'out', 'demo-1.0-1.tgz'))).toBe(true);
    expect(served.stdout).toContain('\nout/demo-1.0-1.tgz\n');
  });

  it('fails as a build in its own process fails: the same line, the same exit code', async () => {
    const u = newUser();
    const app = writeApp();
    const out = tempDir();
    expect(u.run(['build', app, '-d', out], { server: '1' }).status).toBe(0);
    await u.waitForServer();
    writeFileSync(join(app, 'overrides/static/web.yaml'), 'conf: [unclosed\n');
    for (const args of [
      ['build', app, '-d', out],
      ['build', app, '-d', out, '--frobnicate'],
      ['build', app, '-d', out, '-o', 'xml'],
      ['build', join(app, 'missing'), '-d', out],
    ]) {
      const served = u.run(args);
      const alone = u.run(args, { server: '0' });
      expect(served.status, args.join(' ')).toBe(alone.status);
      expect(served.status, args.join(' ')).not.toBe(0);
      expect(served.stderr, args.join(' ')).toBe(alone.stderr);
      expect(served.stdout).toBe(alone.stdout);
    }
    expect(u.servers()[0]?.commandsRun).toBe(4);
  });

  it('serves builds that come at once, one after the other', async () => {
    const u = newUser();
    const app = writeApp();
    expect(u.run(['build', app, '-d', tempDir()], { server: '1' }).status).toBe(0);
    await u.waitForServer();
    const outs = [tempDir(), tempDir(), tempDir()];
    const runs = await Promise.all(
      outs.map(
        (out) =>
          new Promise<{ code: number | null; stdout: string }>((done) => {
            const child = spawn(process.execPath, [cli, 'build', app, '-d', out, '-o', 'json'], { env: u.env(undefined) });
            let stdout = '';
            child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
            child.on('close', (code) => done({ code, stdout }));
          }),
      ),
    );
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0]);
    expect(new Set(runs.map((r) => (JSON.parse(r.stdout) as { sha256: string }).sha256)).size).toBe(1);
    expect(u.servers()[0]?.commandsRun).toBe(3);
  });

  it('is started by a build at a terminal, not by one in CI or without a terminal', async () => {
    const u = newUser();
    const app = writeApp();
    // util-linux `script` gives the build a terminal, as an author's shell does.
    const atTerminal = (extra: Record<string, string>) => {
      const env = u.env(undefined);
      delete env.CI; // whatever the test run's own
      Object.assign(env, extra);
      return spawnSync(
        'script',
        ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(cli)} build ${JSON.stringify(app)} -d ${JSON.stringify(tempDir())}`, '/dev/null'],
        { encoding: 'utf8', env },
      );
    };
    expect(u.run(['build', app, '-d', tempDir()]).status).toBe(0); // no terminal
    expect(atTerminal({ CI: 'true' }).status).toBe(0);
    await new Promise((done) => setTimeout(done, 500));
    expect(u.servers()).toEqual([]);
    const started = atTerminal({});
    expect(started.status).toBe(0);
    expect(started.stdout).toMatch(
      /flotilla: started a build server \(pid \d+\) to make the next builds faster; `flotilla build-server stop` stops it, FLOTILLA_BUILD_SERVER=0 does without/,
    );
    await u.waitForServer();
  });

  it('is not used from another environment, nor when turned off', async () => {
    const u = newUser();
    const app = writeApp();
    expect(u.run(['build', app, '-d', tempDir()], { server: '1' }).status).toBe(0);
    await u.waitForServer();
    expect(u.run(['build', app, '-d', tempDir()], { extra: { SOME_SETTING: 'other' } }).status).toBe(0);
    expect(u.run(['build', app, '-d', tempDir()], { server: '0' }).status).toBe(0);
    expect(u.run(['build', app, '-d', tempDir(), '--no-server']).status).toBe(0);
    expect(u.servers()[0]?.commandsRun).toBe(0);
    const wrong = u.run(['build', app, '-d', tempDir()], { server: 'yes' });
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toBe('flotilla: FLOTILLA_BUILD_SERVER must be 0 (no build server) or 1 (start one), not "yes"\n');
  });

  it('is not used when gone: the build runs in its own process, and the socket left behind is cleared', async () => {
    const u = newUser();
    const app = writeApp();
    expect(u.run(['build', app, '-d', tempDir()], { server: '1' }).status).toBe(0);
    const server = await u.waitForServer();
    process.kill(server.pid, 'SIGKILL');
    await new Promise((done) => setTimeout(done, 100));
    expect(existsSync(server.socket)).toBe(true);
    const out = tempDir();
    const built = u.run(['build', app, '-d', out, '-o', 'json']);
    expect(built.status, built.stderr).toBe(0);
    expect(existsSync(join(out, 'demo-1.0-1.tgz'))).toBe(true);
    expect(u.servers()).toEqual([]);
    expect(existsSync(server.socket)).toBe(false);
  });

  it('is not used, nor started, in a folder others may write to', async () => {
    const u = newUser();
    const app = writeApp();
    expect(u.run(['build', app, '-d', tempDir()], { server: '1' }).status).toBe(0);
    const server = await u.waitForServer();
    const folder = join(u.cacheDir, 'build-servers');
    chmodSync(folder, 0o777);
    expect(u.run(['build', app, '-d', tempDir()]).status).toBe(0);
    chmodSync(folder, 0o700);
    expect(u.servers()[0]?.commandsRun).toBe(0);
    chmodSync(folder, 0o777);
    const refused = u.run(['build-server', 'run']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(
      `flotilla: no build server: ${folder} must be a folder of this user's alone (mode 0700), so nobody else can run builds as them\n`,
    );
    chmodSync(folder, 0o700);
    expect(u.servers().map((s) => s.pid)).toEqual([server.pid]);
  });

  it('stops when idle or asked, and takes its socket with it', async () => {
    const u = newUser();
    const idle = spawn(process.execPath, [cli, 'build-server', 'run', '--idle-timeout', '2'], { env: u.env(undefined), stdio: 'ignore' });
    const exited = new Promise<number | null>((done) => idle.on('exit', done));
    const sockets = () =>
      existsSync(join(u.cacheDir, 'build-servers')) ? readdirSync(join(u.cacheDir, 'build-servers')).filter((f) => f.endsWith('.sock')) : [];
    // Seen listening (a file check: a status command could take longer than the idle time on a busy machine).
    while (sockets().length === 0) await new Promise((done) => setTimeout(done, 20));
    // It exits by itself (were it not to, the test would time out).
    expect(await exited).toBe(0);
    expect(sockets()).toEqual([]);

    const app = writeApp();
    expect(u.run(['build', app, '-d', tempDir()], { server: '1' }).status).toBe(0);
    await u.waitForServer();
    expect(u.run(['build-server', 'stop']).stdout).toBe('stopped 1 build server\n');
    expect(u.run(['build-server', 'status']).stdout).toBe('no build server runs\n');
  });
});
