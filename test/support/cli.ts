/** The built CLI (dist/cli/flotilla.cjs) run as a user runs it: its output on success, or its exit code and output on failure. */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';

const run = promisify(execFile);
const cli = resolve(import.meta.dirname, '../../dist/cli/flotilla.cjs');

export interface Failure {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function flotilla(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [cli, ...args]);
}

/** Runs the CLI expecting a non-zero exit. */
export function failure(...args: string[]): Promise<Failure> {
  return flotilla(...args).then(
    () => expect.fail(`expected a non-zero exit from flotilla ${args.join(' ')}`),
    (e: Failure) => e,
  );
}
