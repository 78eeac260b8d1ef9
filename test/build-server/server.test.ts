/**
 * src/build-server on its own, with a stand-in command: what a client gets back,
 * the order commands run in, a client of another key refused, and the ways
 * a server stops (asked, idle, its socket's name taken by another).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  askServer,
  installationOf,
  listServers,
  runOnServer,
  serve,
  serverPlace,
  serverStatus,
  stopServers,
  type RunRequest,
  type ServerPlace,
} from '../../src/build-server/index.js';
import { tempDir } from '../support/app-fixture.js';

function place(bundle = 'file:///opt/flotilla/dist/cli/flotilla-0123456789abcdef.cjs'): ServerPlace {
  const found = serverPlace(tempDir('flotilla-srv-'), installationOf(bundle), { create: true });
  if (!found) throw new Error('no place');
  return found;
}

const request = (at: ServerPlace, argv: string[]): RunRequest => ({ kind: 'run', key: at.key, argv, cwd: '/' });

/** Resolves once `condition` holds, looking again after each turn of the event loop: waits on what happens, not for a time. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((done) => setTimeout(done, 5));
}

/** Resolves once the server at `at` answers. */
const listening = (at: ServerPlace) => until(async () => (await serverStatus(at.socket)) !== undefined);

function collect() {
  const lines: string[] = [];
  return { lines, output: { out: (text: string) => lines.push(`out:${text}`), err: (text: string) => lines.push(`err:${text}`) } };
}

describe('serverPlace', () => {
  it('names one server per installation and environment, ignoring what a shell sets per call', () => {
    const cache = tempDir('flotilla-srv-');
    const at = (env: NodeJS.ProcessEnv, bundle = 'file:///a/dist/cli/flotilla-00000000000000aa.cjs') =>
      serverPlace(cache, installationOf(bundle), { create: true, env })!;
    const base = { HOME: '/home/u', PATH: '/usr/bin' };
    expect(at({ ...base, PWD: '/x', OLDPWD: '/y', SHLVL: '2', _: '/usr/bin/env', FLOTILLA_BUILD_SERVER: '1', npm_lifecycle_event: 'x' }).socket).toBe(
      at(base).socket,
    );
    expect(at({ ...base, FLOTILLA_HELM: '/other/helm' }).socket).not.toBe(at(base).socket);
    expect(at(base, 'file:///a/dist/cli/flotilla-00000000000000bb.cjs').key).not.toBe(at(base).key);
    expect(installationOf('file:///a/dist/cli/flotilla-00000000000000bb.cjs').contentHash).toBe('00000000000000bb');
  });
});

describe('serve', () => {
  it('relays output and exit code, runs one command at a time, and refuses a client of another key', async () => {
    const at = place();
    const ran: string[] = [];
    const served = serve({
      place: at,
      idleMillis: 60_000,
      apps: () => ['/app'],
      run: async (req, output) => {
        ran.push(`start ${req.argv[0]}`);
        output.out(`hello ${req.argv[0]}\n`);
        await new Promise((done) => setTimeout(done, 30));
        output.err('warning\n');
        ran.push(`end ${req.argv[0]}`);
        return req.argv[0] === 'fail' ? 1 : 0;
      },
    });
    await listening(at);
    const one = collect();
    const two = collect();
    const codes = await Promise.all([runOnServer(at.socket, request(at, ['ok']), one.output), runOnServer(at.socket, request(at, ['fail']), two.output)]);
    expect(codes).toEqual([0, 1]);
    expect(one.lines).toEqual(['out:hello ok\n', 'err:warning\n']);
    expect(ran).toEqual(['start ok', 'end ok', 'start fail', 'end fail']);
    // A key the server does not hold: not its environment, whatever the socket's name says.
    expect(await runOnServer(at.socket, { ...request(at, ['ok']), key: 'another' }, collect().output)).toBeUndefined();
    const status = await serverStatus(at.socket);
    expect([status?.commandsRun, status?.apps]).toEqual([2, ['/app']]);
    expect(await askServer(at.socket, { kind: 'stop' })).toEqual({ kind: 'stopping' });
    await served;
    expect(existsSync(at.socket)).toBe(false);
    expect(await runOnServer(at.socket, request(at, ['ok']), collect().output)).toBeUndefined();
  });

  it('warms up when first quiet after its first commands, cut short by a command that comes meanwhile and taken up again at the next quiet spell', async () => {
    const at = place();
    const events: string[] = [];
    let warmUps = 0;
    const served = serve({
      place: at,
      idleMillis: 60_000,
      apps: () => [],
      prepare: async () => void events.push('prepared'),
      warmUp: {
        // Far longer than three commands sent back to back take.
        afterIdleMillis: 1000,
        run: async (cut) => {
          events.push('warm-up start');
          if (++warmUps === 1) {
            // The first runs until a command cuts it short, as a build in memory stops between charts.
            await new Promise((done) => cut.addEventListener('abort', done, { once: true }));
            events.push('warm-up cut short');
            throw new Error('cut short');
          }
          events.push('warm-up end');
        },
      },
      run: async (req) => {
        events.push(`run ${req.argv[0]}`);
        return 0;
      },
    });
    await listening(at);
    // Commands closer together than the quiet spell: no warm-up between them.
    for (const name of ['a', 'b', 'c']) expect(await runOnServer(at.socket, request(at, [name]), collect().output)).toBe(0);
    expect((await serverStatus(at.socket))?.warmedUp).toBe(false);
    // Quiet: the warm-up starts; a command sent while it runs cuts it short and runs.
    await until(() => events.includes('warm-up start'));
    expect(await runOnServer(at.socket, request(at, ['during']), collect().output)).toBe(0);
    expect((await serverStatus(at.socket))?.warmedUp).toBe(false);
    // The next quiet spell takes it up again, to its end; then never again.
    await until(async () => (await serverStatus(at.socket))?.warmUp === 'done');
    expect(await serverStatus(at.socket)).toMatchObject({ warmUp: 'done', warmedUp: true });
    expect(events).toEqual(['prepared', 'run a', 'run b', 'run c', 'warm-up start', 'warm-up cut short', 'run during', 'warm-up start', 'warm-up end']);
    await askServer(at.socket, { kind: 'stop' });
    await served;
  });

  it('counts a warm-up that fails as none, and does not try it again', async () => {
    const at = place();
    let runs = 0;
    const served = serve({
      place: at,
      idleMillis: 60_000,
      apps: () => [],
      warmUp: {
        afterIdleMillis: 100,
        run: async () => {
          runs++;
          throw new Error('the build in memory exited 1');
        },
      },
      run: async () => 0,
    });
    await until(() => runs === 1);
    expect(await runOnServer(at.socket, request(at, ['a']), collect().output)).toBe(0);
    // A quiet spell several times the warm-up's: had it been tried again, it would have been by now.
    await new Promise((done) => setTimeout(done, 400));
    expect(runs).toBe(1);
    expect(await serverStatus(at.socket)).toMatchObject({ warmUp: 'failed', warmedUp: false });
    await askServer(at.socket, { kind: 'stop' });
    await served;
  });

  it('cancels the command of a client gone before it ended, and never starts one whose client left while it waited', async () => {
    const at = place();
    const seen: string[] = [];
    const served = serve({
      place: at,
      idleMillis: 60_000,
      apps: () => [],
      run: async (req, _output, cancelled) => {
        seen.push(`start ${req.argv[0]}`);
        // The first runs until its client leaves; the others end at once.
        if (req.argv[0] === 'first') await new Promise((done) => cancelled.addEventListener('abort', done, { once: true }));
        seen.push(`${req.argv[0]} cancelled: ${cancelled.aborted}`);
        return 0;
      },
    });
    await listening(at);
    // A client that sends its command and leaves while it runs (Ctrl-C), one that leaves while it waits its turn, and one that stays.
    const client = (argv: string[]) => {
      const socket = connect(at.socket, () => socket.write(`${JSON.stringify(request(at, argv))}\n`));
      return { leave: () => socket.destroy() };
    };
    const first = client(['first']);
    await until(() => seen.includes('start first'));
    const queued = client(['queued']);
    const staying = runOnServer(at.socket, request(at, ['staying']), collect().output);
    // A round trip after both: the server has read their commands (it reads connections in order).
    await serverStatus(at.socket);
    queued.leave();
    // And one after it left: the server has seen it go before the first command ends.
    await serverStatus(at.socket);
    first.leave();
    expect(await staying).toBe(0);
    expect(seen).toEqual(['start first', 'first cancelled: true', 'start staying', 'staying cancelled: false']);
    expect((await serverStatus(at.socket))?.commandsRun).toBe(2); // the one never started is not counted
    await askServer(at.socket, { kind: 'stop' });
    await served;
  });

  it('lists the servers that answer, clearing sockets left behind, and stops them', async () => {
    const at = place();
    const served = serve({ place: at, idleMillis: 60_000, apps: () => [], run: async () => 0 });
    await listening(at);
    const stale = join(at.dir, '0000000000000000.sock');
    writeFileSync(stale, ''); // no server behind it
    expect((await listServers(at.dir)).map((s) => s.socket)).toEqual([at.socket]);
    expect(existsSync(stale)).toBe(false);
    await stopServers(await listServers(at.dir), 0);
    await served;
    expect(await listServers(at.dir)).toEqual([]);
  });

  it('stops when its own code is gone (flotilla rebuilt or reinstalled)', async () => {
    const at = place();
    let installed = true;
    const served = serve({ place: at, idleMillis: 60_000, apps: () => [], run: async () => 0, installed: () => installed });
    await listening(at);
    expect(await runOnServer(at.socket, request(at, []), collect().output)).toBe(0);
    installed = false;
    await served;
    expect(existsSync(at.socket)).toBe(false);
  });

  it('stops when idle, and when another server has taken its socket', async () => {
    const idle = place();
    // Nothing comes: it ends by itself (were it not to, the test would time out).
    await serve({ place: idle, idleMillis: 300, apps: () => [], run: async () => 0 });
    expect(existsSync(idle.socket)).toBe(false);

    const shared = place();
    const first = serve({ place: shared, idleMillis: 60_000, apps: () => [], run: async () => 0 });
    await listening(shared);
    const second = serve({ place: shared, idleMillis: 60_000, apps: () => [], run: async () => 7 });
    await first; // its name is the second's now
    expect(await runOnServer(shared.socket, request(shared, []), collect().output)).toBe(7);
    await askServer(shared.socket, { kind: 'stop' });
    await second;
  });
});
