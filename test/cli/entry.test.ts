/**
 * The `flotilla` entry (dist/cli/flotilla.cjs) run as a program, as the
 * `flotilla` command is: its shell lines choose how Node starts
 * (src/cli/entry-shell.ts), and `node dist/cli/flotilla.cjs` still runs the
 * same CLI without them. Each process reports, through a probe NODE_OPTIONS
 * loads, its Node flags and the environment its code and children see.
 * Processes run asynchronously: one test's plugin talks to an HTTPS server
 * of the test's own process.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS_WITHOUT_TLS } from '../../src/cli/commands/index.js';
import { DEFERRED_CA_VARIABLE, entryShellLines, restoreDeferredVariables } from '../../src/cli/entry-shell.js';
import { tempDir, writeApp } from '../support/app-fixture.js';

const entry = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');

interface Seen {
  readonly execArgv: readonly string[];
  readonly ca?: string;
  readonly deferred?: string;
}

/** Node's warning for a NODE_EXTRA_CA_CERTS it could not read: printed as Node starts, so only when Node was given the variable. */
const CA_WARNING = /Ignoring extra certs from/;

/**
 * `program`: the entry run as a program, `link`: through a symbolic link to
 * it (as npm links the command), `node`: by `node <entry>`. `stopWhen`: Ctrl-C
 * once the output says it (for `--watch`).
 */
async function run(how: 'program' | 'link' | 'node', args: readonly string[], env: Record<string, string> = {}, stopWhen?: RegExp) {
  const dir = tempDir();
  const probe = join(dir, 'probe.cjs');
  writeFileSync(
    probe,
    `process.on('exit', () => process.stderr.write('SEEN ' + JSON.stringify({ execArgv: process.execArgv, ca: process.env.NODE_EXTRA_CA_CERTS, deferred: process.env.${DEFERRED_CA_VARIABLE} }) + '\\n'));\n`,
  );
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base[DEFERRED_CA_VARIABLE];
  const fullEnv: NodeJS.ProcessEnv = {
    ...base,
    FLOTILLA_BUILD_SERVER: '0',
    FLOTILLA_CACHE_DIR: join(dir, 'cache'),
    ...env,
    NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(probe)}`,
  };
  const link = join(dir, 'bin', 'flotilla');
  if (how === 'link') {
    mkdirSync(join(dir, 'bin'));
    symlinkSync(entry, link);
  }
  const child = how === 'node' ? spawn(process.execPath, [entry, ...args], { env: fullEnv }) : spawn(how === 'link' ? link : entry, args, { env: fullEnv });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stopWhen?.test(stdout) && stdout.endsWith('\n')) child.kill('SIGINT');
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A watch that never says what it waits for must not outlive the test.
  const deadline = stopWhen ? setTimeout(() => child.kill('SIGKILL'), 30_000) : undefined;
  const status = await new Promise<number | null>((done, fail) => {
    child.on('error', fail);
    child.on('close', done);
  });
  clearTimeout(deadline);
  const seen = /^SEEN (.*)$/m.exec(stderr);
  return { status, stdout, stderr, seen: seen ? (JSON.parse(seen[1]!) as Seen) : undefined };
}

const POOL = ['--v8-pool-size=1'];

describe('the flotilla entry', () => {
  it('is a shell script whose first lines are the entry shell, and a module Node runs', async () => {
    const lines = readFileSync(entry, 'utf8').split('\n');
    expect(lines.slice(0, 4)).toEqual(entryShellLines(COMMANDS_WITHOUT_TLS));
    accessSync(entry, constants.X_OK);
    expect((await run('program', ['--version'])).stdout.trim()).toBe('0.1.0');
    expect((await run('node', ['--version'])).stdout.trim()).toBe('0.1.0');
  });

  it('starts a build without NODE_EXTRA_CA_CERTS and gives it back before the command runs', async () => {
    // Arguments reach the CLI as given: a folder with a space and a quote in its name.
    const out = join(tempDir(), `out "dir" here`);
    const missing = join(tempDir(), 'no such file.pem');
    const built = await run('program', ['build', writeApp(), '-d', out], { NODE_EXTRA_CA_CERTS: missing });
    expect(built.status, built.stderr).toBe(0);
    expect(built.stderr).not.toMatch(CA_WARNING);
    expect(built.seen).toEqual({ execArgv: POOL, ca: missing });
    // Set but empty is given back as it was.
    expect((await run('program', ['build', writeApp(), '-d', out], { NODE_EXTRA_CA_CERTS: '' })).seen).toEqual({ execArgv: POOL, ca: '' });
  });

  it('runs through a symbolic link, as npm links the command', async () => {
    const built = await run('link', ['build', writeApp(), '-d', join(tempDir(), 'out')], { NODE_EXTRA_CA_CERTS: join(tempDir(), 'missing.pem') });
    expect(built.status, built.stderr).toBe(0);
    expect(built.stderr).not.toMatch(CA_WARNING);
    expect(built.seen?.execArgv).toEqual(POOL);
  });

  it('keeps NODE_EXTRA_CA_CERTS for a command that may open a TLS connection', async () => {
    const missing = join(tempDir(), 'missing.pem');
    const push = await run('program', ['push', '--help'], { NODE_EXTRA_CA_CERTS: missing });
    expect(push.status, push.stderr).toBe(0);
    expect(push.stderr).toMatch(CA_WARNING);
    expect(push.seen).toEqual({ execArgv: POOL, ca: missing });
  });

  it('runs the same CLI when Node runs it directly, with the environment untouched', async () => {
    const missing = join(tempDir(), 'missing.pem');
    const built = await run('node', ['build', writeApp(), '-d', join(tempDir(), 'out')], { NODE_EXTRA_CA_CERTS: missing });
    expect(built.status, built.stderr).toBe(0);
    expect(built.stderr).toMatch(CA_WARNING);
    expect(built.seen).toEqual({ execArgv: [], ca: missing });
  });

  it('drops a deferred value it did not set itself', async () => {
    expect((await run('program', ['--version'], { [DEFERRED_CA_VARIABLE]: '/elsewhere.pem' })).seen).toEqual({
      execArgv: POOL,
      ca: process.env.NODE_EXTRA_CA_CERTS,
    });
  });

  it('leaves the pool size to NODE_OPTIONS when it names one, in either spelling', async () => {
    for (const option of ['--v8-pool-size=2', '--v8_pool_size=2'])
      expect((await run('program', ['--version'], { NODE_OPTIONS: option })).seen?.execArgv).toEqual([]);
  });

  it('gives NODE_EXTRA_CA_CERTS back, empty or not, and keeps one already set', () => {
    for (const [value, startedWithoutExtraCaCerts] of [
      ['/etc/ca.pem', true],
      ['', false],
    ] as const) {
      const env: NodeJS.ProcessEnv = { [DEFERRED_CA_VARIABLE]: value, PATH: '/bin' };
      expect(restoreDeferredVariables(env)).toBe(startedWithoutExtraCaCerts);
      expect(env).toEqual({ NODE_EXTRA_CA_CERTS: value, PATH: '/bin' });
    }
    const both: NodeJS.ProcessEnv = { [DEFERRED_CA_VARIABLE]: '/a.pem', NODE_EXTRA_CA_CERTS: '/b.pem' };
    expect(restoreDeferredVariables(both)).toBe(false);
    expect(both).toEqual({ NODE_EXTRA_CA_CERTS: '/b.pem' });
    const neither: NodeJS.ProcessEnv = { PATH: '/bin' };
    expect(restoreDeferredVariables(neither)).toBe(false);
    expect(neither).toEqual({ PATH: '/bin' });
  });

  it('refuses a command word the shell could not match', () => {
    expect(() => entryShellLines(['build', 'x;rm'])).toThrow(/"x;rm" is not a command word/);
  });
});
