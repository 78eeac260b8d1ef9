/**
 * Every command of the CLI, by name. Each module exports one
 * `register(program, context)`; modules load only when their command runs (or for
 * --help), so `flotilla build` does not pay for the Kubernetes client.
 * To add a command: one line here, named as the user types it.
 */
import type { Command } from 'commander';
import type { RegisterContext } from '../context.js';

export type RegisterCommand = (program: Command, context: RegisterContext) => void;

type CommandModule = Promise<{ register: RegisterCommand }>;

export const commands: Readonly<Record<string, () => CommandModule>> = {
  init: () => import('./init.js'),
  releases: () => import('./releases.js'),
  overrides: () => import('./overrides.js'),
  preflight: () => import('./preflight.js'),
  template: () => import('./template.js'),
  build: () => import('./build.js'),
  verify: () => import('./verify.js'),
  inspect: () => import('./verify.js'),
  sign: () => import('./verify.js'),
  policy: () => import('./policy.js'),
  plugin: () => import('./plugin.js'),
  import: () => import('./import.js'),
  upload: () => import('./lifecycle.js'),
  apply: () => import('./lifecycle.js'),
  remove: () => import('./lifecycle.js'),
  delete: () => import('./lifecycle.js'),
  abort: () => import('./lifecycle.js'),
  list: () => import('./lifecycle.js'),
  show: () => import('./lifecycle.js'),
  update: () => import('./lifecycle.js'),
  override: () => import('./lifecycle.js'),
  diff: () => import('./lifecycle.js'),
  bump: () => import('./bump.js'),
  images: () => import('./images.js'),
  version: () => import('./version.js'),
  push: () => import('./push.js'),
  starlingx: () => import('./starlingx.js'),
  'build-server': () => import('./build-server.js'),
};

/**
 * The commands that open no TLS connection of their own (plugins they run
 * run offline: docs/plugins.md). The `flotilla` entry starts Node for them
 * without the certificates NODE_EXTRA_CA_CERTS names (src/cli/entry-shell.ts);
 * test/architecture/imports.test.ts walks each one's modules for a TLS
 * client. A new command joins only if it never will open one.
 */
export const COMMANDS_WITHOUT_TLS: readonly string[] = [
  'build',
  'build-server',
  'template',
  'releases',
  'preflight',
  'verify',
  'inspect',
  'sign',
  'policy',
  'plugin',
  'import',
  'init',
];

/**
 * The commands that print no data of their own, so take no `-o`: each with
 * why. Every other command takes `-o table|json|yaml` (docs/output.md);
 * test/cli/output-contract.test.ts holds the CLI to it.
 */
export const COMMANDS_WITHOUT_DATA: Readonly<Record<string, string>> = {
  template: "prints the charts' rendered manifests exactly as helm template does (or writes them with --output-dir)",
  'build-server run': 'serves builds in the foreground until idle or stopped; says so on stderr',
};
