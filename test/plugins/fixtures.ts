/**
 * Fixture apps with plugins: the base app of test/support (releases db and
 * web) plus plugin files, and a host over them with its state in a temp folder
 * and its log lines collected.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadApp, type App } from '../../src/app/index.js';
import { loadAppPlugins, type PluginHost, type PluginHostOptions, type PluginLogEntry } from '../../src/plugins/index.js';
import { tempDir, writeApp, type Files } from '../support/app-fixture.js';

export interface Fixture {
  readonly root: string;
  readonly app: App;
  readonly host: PluginHost;
  readonly log: PluginLogEntry[];
  readonly stateDir: string;
}

export async function pluginFixture(files: Files, options: Partial<PluginHostOptions> = {}): Promise<Fixture> {
  const root = writeApp(files);
  const app = await loadApp(root);
  const log: PluginLogEntry[] = [];
  const stateDir = tempDir('flotilla-state-');
  const host = await loadAppPlugins(app, { mode: 'offline', stateDir, log: (e) => log.push(e), ...options });
  return { root, app, host, log, stateDir };
}

/** A chart plugin source: `body` goes inside the class. */
export function chartPlugin(chart: string, body = '', imports = ''): string {
  return `import { ChartPlugin, refuse, type ChartContext, type Operation, type Values } from 'flotilla/plugin';
${imports}
export default class Plugin extends ChartPlugin {
  readonly chart = '${chart}';
${body}
}
`;
}

const ROOT = join(import.meta.dirname, '..', '..');

/** Runs the CLI from sources, state kept in a temp folder. */
export async function flotilla(args: readonly string[], stateDir = tempDir('flotilla-state-')): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, FLOTILLA_STATE_DIR: stateDir },
  });
}

/** The release table of the fixture app, db and web. */
export const releasesDbWeb = `defaults:
  namespace: demo
  releaseNamePrefix: demo-
releases:
  - name: db
    chart: db
    service: database
    group: infra
  - name: web
    chart: web
    service: frontend
    group: apps
    dependsOn: [db]
`;

/** The same, with a second release of the web chart. */
export const releasesWithTwoWebs = `${releasesDbWeb}  - name: web-admin
    chart: web
    service: frontend
    dependsOn: [db]
`;
