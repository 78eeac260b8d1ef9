/**
 * `flotilla init`: the smallest app that builds, previews and applies — the
 * three files every app needs (metadata, release table, deployment spec),
 * one release per application chart, each file saying what it is for. The
 * rest of the layout (version catalog, presets, sizes, static overrides,
 * templates, plugins, policies) is what an app turns on when it needs it
 * (docs/app-format.md).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join, relative, resolve, sep } from 'node:path';
import { APP_FILES } from '../app/index.js';
import { extractTarGzSafely } from '../tarball/index.js';
import { parseChartYaml } from '../charts/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import { isDns1123Label, nearest } from '../names/index.js';

export type InitTarget = 'flux' | 'starlingx' | 'both';
export const INIT_TARGETS: readonly InitTarget[] = ['flux', 'starlingx', 'both'];

export interface InitOptions {
  /** App name (metadata app_name); default: the folder's name made a DNS label. */
  readonly name?: string;
  /** Charts to put in the app: chart folders or packaged `.tgz` archives. Default: the charts already in `<dir>/charts/`. */
  readonly charts?: readonly string[];
  /** Namespace of every release; default: the app name. */
  readonly namespace?: string;
  /** Where the app is deployed: plain Flux, StarlingX, or both (metadata `flotilla.target`). */
  readonly target?: InitTarget;
}

export interface InitResult {
  readonly dir: string;
  readonly name: string;
  readonly files: readonly string[];
  readonly releases: readonly { readonly name: string; readonly chart: string; readonly namespace: string }[];
}

export class InitError extends FlotillaError {}

interface FoundChart {
  readonly name: string;
  readonly library: boolean;
}

/** A folder name as an app name: lower-case, runs of other characters as one dash. */
function nameOf(dir: string): string {
  return (
    basename(resolve(dir))
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 63) || 'app'
  );
}

async function chartIn(folder: string, given: string): Promise<FoundChart> {
  const file = join(folder, 'Chart.yaml');
  if (!existsSync(file)) throw new InitError(`${given}: no Chart.yaml (a chart folder, or a chart archive made by helm package or helm pull)`);
  const chart = parseChartYaml(await readFile(file, 'utf8'), relative(process.cwd(), file) || file);
  return { name: chart.name, library: chart.type === 'library' };
}

/** Puts one chart given on the command line into `<root>/charts/<name>/`; returns what it is. */
async function addChart(root: string, given: string): Promise<FoundChart> {
  const path = resolve(given);
  if (!existsSync(path)) throw new InitError(`--chart ${given}: no such file or folder`);
  const charts = join(root, 'charts');
  if (statSync(path).isDirectory()) {
    const chart = await chartIn(path, given);
    const into = join(charts, chart.name);
    if (resolve(into) !== path) {
      if (existsSync(into)) throw new InitError(`--chart ${given}: charts/${chart.name}/ exists already`);
      await cp(path, into, { recursive: true, verbatimSymlinks: true });
    }
    return chart;
  }
  // A packaged chart: one top folder named after the chart, read with the safe reader.
  const unpack = join(charts, '.init-unpack');
  try {
    const extracted = await extractTarGzSafely(path, unpack);
    const tops = [...new Set(extracted.files.map((f) => f.split('/')[0] as string))];
    const [top] = tops;
    if (tops.length !== 1 || top === undefined) throw new InitError(`--chart ${given}: a chart archive holds one folder, the chart's`);
    const chart = await chartIn(join(unpack, top), given);
    if (existsSync(join(charts, chart.name))) throw new InitError(`--chart ${given}: charts/${chart.name}/ exists already`);
    await rename(join(unpack, top), join(charts, chart.name));
    return chart;
  } finally {
    await rm(unpack, { recursive: true, force: true });
  }
}

/** The charts already in `<root>/charts/`, by folder. */
async function chartsAlreadyThere(root: string): Promise<FoundChart[]> {
  const dir = join(root, 'charts');
  if (!existsSync(dir)) return [];
  const found: FoundChart[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory() && existsSync(join(dir, entry.name, 'Chart.yaml'))) found.push(await chartIn(join(dir, entry.name), `charts/${entry.name}`));
  }
  return found;
}

const metadataText = (name: string, target: InitTarget) => `# What the app is: its name, version and the Kubernetes versions it supports.
# StarlingX reads this file as the application's metadata.yaml; flotilla reads
# it for every command. Unknown keys are warnings.
app_name: ${name}
# Names the tarball ${name}-<app_version>.tgz; raise it for every release of the app.
app_version: 0.1.0-1

supported_k8s_version:
  minimum: v1.29.0

flotilla:
  # Where the app is deployed: flux (plain Flux), starlingx (StarlingX's
  # application framework) or both. StarlingX checks run only for the last two.
  target: ${target}
`;

const releasesText = (namespace: string, releases: readonly FoundChart[]) => `# The release table: one Helm release per entry, deployed by Flux as a
# HelmRelease. Fields every release shares go under defaults; a release's own
# fields win. Order installs with dependsOn (release names), e.g. a web front
# end after its database:  dependsOn: [db]   (docs/app-format.md).
defaults:
  namespace: ${namespace}
releases:
${releases.map((r) => `  - name: ${r.name}\n    chart: ${r.name}      # charts/${r.name}/\n    service: ${r.name}    # deployed when features.services lists it\n`).join('')}`;

const deploymentText = (releases: readonly FoundChart[]) => `# The deployment: what \`flotilla apply\` deploys when the operator gives no
# spec of their own (--deployment FILE). Values for a release's chart go under
# services.<service>.<chart>.values; values for every chart under
# common.charts.values (docs/app-format.md).
features:
  # The services to deploy (each release of fluxcd/releases.yaml names its service).
  services: [${releases.map((r) => r.name).join(', ')}]

services:
${releases.map((r) => `  ${r.name}:\n    ${r.name}:\n      values: {}\n`).join('')}`;

/** Writes the app; refuses a folder that already holds one, or charts that cannot be releases. */
export async function initApp(dir: string, options: InitOptions = {}): Promise<InitResult> {
  const root = resolve(dir);
  if (existsSync(join(root, APP_FILES.metadata))) throw new InitError(`${join(dir, APP_FILES.metadata)} exists: ${dir} already holds an app`);
  const name = options.name ?? nameOf(root);
  if (!isDns1123Label(name)) throw new InitError(`app name "${name}" is not a DNS-1123 label (lower-case letters, digits and dashes, at most 63): give --name`);
  const namespace = options.namespace ?? name;
  if (!isDns1123Label(namespace)) throw new InitError(`namespace "${namespace}" is not a DNS-1123 label`);
  const target = options.target ?? 'both';
  if (!INIT_TARGETS.includes(target)) throw new InitError(`--target ${target}: expected ${nearest(target, INIT_TARGETS) ?? INIT_TARGETS.join(', ')}`);

  await mkdir(join(root, 'charts'), { recursive: true });
  const given: FoundChart[] = [];
  for (const chart of options.charts ?? []) given.push(await addChart(root, chart));
  const charts = options.charts?.length ? given : await chartsAlreadyThere(root);
  const releases = charts.filter((c) => !c.library);
  if (releases.length === 0)
    throw new InitError(`no application chart: give --chart PATH (a chart folder or archive), or put charts in ${join(dir, 'charts')}${sep}`);
  for (const r of releases)
    if (!isDns1123Label(r.name)) throw new InitError(`chart "${r.name}" cannot name a release (a DNS-1123 label): rename it in its Chart.yaml`);

  const files: [string, string][] = [
    [APP_FILES.metadata, metadataText(name, target)],
    [APP_FILES.releases, releasesText(namespace, releases)],
    [APP_FILES.deployment, deploymentText(releases)],
  ];
  for (const [file, text] of files) {
    await mkdir(join(root, file, '..'), { recursive: true });
    await writeFile(join(root, file), text, { flag: 'wx' });
  }
  return { dir: root, name, files: files.map(([f]) => f), releases: releases.map((r) => ({ name: r.name, chart: r.name, namespace })) };
}
