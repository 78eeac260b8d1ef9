/** `flotilla version …`: the app's OpenStack versions in the cluster (docs/versions.md). */
import type { Command } from 'commander';
import { registerContinue } from './version-continue.js';

export function register(program: Command): void {
  const version = program.command('version').description("the app's OpenStack versions in the cluster: the staged update's phases");
  registerContinue(version);
}
