/**
 * `flotilla … | head`: through the built CLI, a reader that closes stdout
 * early ends the command quietly — no EPIPE stack trace — with the exit code
 * the command would have had.
 */
import { execFile, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const CLI = resolve(ROOT, 'dist', 'cli', 'flotilla.cjs');

/** Runs the CLI with its stdout pipe closed by the reader before the command writes anything. */
function withClosedStdout(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stderr }));
  });
}

describe('a closed stdout', () => {
  it('ends a command that prints quietly, exit 0', async () => {
    expect(await withClosedStdout(['overrides', 'keystone'])).toEqual({ code: 0, stderr: '' });
  });

  it("keeps a failing command's exit code and its one line on stderr", async () => {
    const run = await withClosedStdout(['overrides', 'no-such-release']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^flotilla: no release [^\n]*"no-such-release"[^\n]*\n$/);
  });

  it("in a shell pipeline into head: what head prints, the command's exit code, no stack trace", async () => {
    // head -n 0 exits without reading, so every write of the CLI meets a closed pipe.
    const script = `"${process.execPath}" "${CLI}" overrides keystone | head -n 0; echo "exit \${PIPESTATUS[0]}" >&2; "${process.execPath}" "${CLI}" overrides keystone | head -n 1`;
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((done, fail) =>
      execFile('bash', ['-c', script], { cwd: ROOT }, (error, out, err) => (error ? fail(error) : done({ stdout: out, stderr: err }))),
    );
    expect(stderr).toBe('exit 0\n');
    expect(stdout).toBe('images:\n');
  });
});
