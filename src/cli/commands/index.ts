/** Every command of the CLI; each module exports one `register(program)`. */
import type { Command } from 'commander';

export type RegisterCommand = (program: Command) => void;

export const commands: readonly RegisterCommand[] = [];
