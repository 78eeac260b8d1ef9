/** Every command of the CLI; each module exports one `register(program)`. */
import type { Command } from 'commander';
import { register as build } from './build.js';
import { register as overrides } from './overrides.js';
import { register as policy } from './policy.js';
import { register as preflight } from './preflight.js';
import { register as releases } from './releases.js';
import { register as verify } from './verify.js';

export type RegisterCommand = (program: Command) => void;

export const commands: readonly RegisterCommand[] = [releases, overrides, preflight, build, verify, policy];
