/**
 * Policies of an app source tree: each chart's `conf.policy` layers, the
 * selected policy set, and the app-wide lint.
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { PolicyLookupError } from './errors.js';
import { nearest } from './heuristics.js';
import { lintResolved, sortFindings, type DeclaredRoles, type LintFinding } from './linter.js';
import {
  declaredRolesOf,
  loadPolicyFile,
  loadPolicySet,
  policySetLayers,
} from './loaders.js';
import { matrixActions, matrixCell } from './matrix.js';
import { resolveSections, type EffectivePolicy } from './policy.js';
import type { PolicyLayer, PolicySet } from './types.js';
import { personaRoles } from './roles.js';

/**
 * Which set to use: a name, `null` for none, or undefined for the one the
 * deployment spec selects (`features.policies`).
 */
export type SetChoice = string | null | undefined;

/**
 * The set named by `features.policies` in `overrides/deployment.yaml`.
 * (The merged spec — preset, size, deployment — is src/app's job; this
 * reads the deployment file only, which is where the set is chosen.)
 */
export async function selectedPolicySet(appRoot: string): Promise<string | undefined> {
  const file = join(appRoot, 'overrides', 'deployment.yaml');
  if (!existsSync(file)) return undefined;
  const spec: unknown = parseYaml(await readFile(file, 'utf8'));
  const features = isRecord(spec) ? spec['features'] : undefined;
  const value = isRecord(features) ? features['policies'] : undefined;
  return typeof value === 'string' && value !== '' && value !== 'none' ? value : undefined;
}

export async function resolveSetChoice(appRoot: string, choice: SetChoice): Promise<PolicySet | undefined> {
  const name = choice === undefined ? await selectedPolicySet(appRoot) : choice;
  return name === null || name === undefined || name === 'none' ? undefined : loadPolicySet(appRoot, name);
}

/**
 * The `conf.policy` layers of one chart, lowest first:
 *   "chart defaults"      charts/<chart>/values.yaml (or the release's `path`)
 *   "static"              overrides/static/<chart>.yaml
 *   "policy set <name>"   policies/<name>/<chart>.yaml
 *
 * TODO(values engine): this reads the three files itself. It is to be
 * replaced by the values engine's per-layer output (src/values
 * `buildLayers`), taking `conf.policy` of every layer that sets it — which
 * also brings templates, plugin, common, service and user layers in.
 * Keep this function the only place that knows where layers come from.
 */
export async function appPolicyLayers(appRoot: string, chart: string, options: { set?: SetChoice } = {}): Promise<PolicyLayer[]> {
  const set = await resolveSetChoice(appRoot, options.set);
  const layers: PolicyLayer[] = [];
  const values = join(await chartDir(appRoot, chart), 'values.yaml');
  if (existsSync(values)) layers.push(...(await loadPolicyFile(values, { label: 'chart defaults', kind: 'defaults' })));
  const staticFile = join(appRoot, 'overrides', 'static', `${chart}.yaml`);
  if (existsSync(staticFile)) layers.push(...(await loadPolicyFile(staticFile, { label: 'static', kind: 'override' })));
  if (set) layers.push(...(await policySetLayers(set, chart)));
  return layers;
}

/** The folder of a chart: the release table's `path` for it, else charts/<chart>. */
async function chartDir(appRoot: string, chart: string): Promise<string> {
  const release = (await releaseCharts(appRoot)).find((r) => r.chart === chart && r.path !== undefined);
  return resolve(appRoot, release?.path ?? join('charts', chart));
}

async function releaseCharts(appRoot: string): Promise<{ chart: string; path?: string }[]> {
  const file = join(appRoot, 'fluxcd', 'releases.yaml');
  if (!existsSync(file)) return [];
  const table: unknown = parseYaml(await readFile(file, 'utf8'));
  const releases = isRecord(table) && Array.isArray(table['releases']) ? (table['releases'] as unknown[]) : [];
  return releases.flatMap((r) => {
    if (!isRecord(r) || typeof r['chart'] !== 'string') return [];
    return [{ chart: r['chart'], ...(typeof r['path'] === 'string' ? { path: r['path'] } : {}) }];
  });
}

/** Every chart the app has: charts/ folders and the release table's charts. */
export async function appCharts(appRoot: string): Promise<string[]> {
  const names = new Set<string>();
  const chartsDir = join(appRoot, 'charts');
  if (existsSync(chartsDir)) {
    for (const entry of await readdir(chartsDir, { withFileTypes: true })) {
      if (entry.isDirectory() && existsSync(join(chartsDir, entry.name, 'Chart.yaml'))) names.add(entry.name);
    }
  }
  for (const r of await releaseCharts(appRoot)) names.add(r.chart);
  return [...names].sort();
}

/** Charts that have any policy layer: charts, static overrides and set files. */
async function policyCandidates(appRoot: string, set: PolicySet | undefined): Promise<string[]> {
  const names = new Set(await appCharts(appRoot));
  const staticDir = join(appRoot, 'overrides', 'static');
  if (existsSync(staticDir)) {
    for (const f of await readdir(staticDir)) if (extname(f) === '.yaml') names.add(basename(f, '.yaml'));
  }
  for (const chart of set?.files.keys() ?? []) names.add(chart);
  return [...names].sort();
}

/** One chart's policy: each section stacked (one section `""` unless the chart keeps a map per service). */
export interface ChartPolicy {
  readonly chart: string;
  readonly layers: readonly PolicyLayer[];
  readonly sections: ReadonlyMap<string, EffectivePolicy>;
}

export interface AppPolicies {
  readonly root: string;
  readonly set?: PolicySet;
  readonly charts: ReadonlyMap<string, ChartPolicy>;
}

/** The policy of every chart that has one (or of `chart` only). */
export async function loadAppPolicies(appRoot: string, options: { set?: SetChoice; chart?: string } = {}): Promise<AppPolicies> {
  const root = resolve(appRoot);
  const set = await resolveSetChoice(root, options.set);
  const setChoice: SetChoice = set?.name ?? null;
  const candidates = await policyCandidates(root, set);
  if (options.chart !== undefined && !candidates.includes(options.chart)) {
    const guess = nearest(options.chart, candidates);
    throw new PolicyLookupError(`the app has no chart "${options.chart}"${guess ? ` (did you mean "${guess}"?)` : ''}`);
  }
  const charts = new Map<string, ChartPolicy>();
  for (const chart of options.chart !== undefined ? [options.chart] : candidates) {
    const layers = await appPolicyLayers(root, chart, { set: setChoice });
    if (layers.length === 0 && options.chart === undefined) continue;
    charts.set(chart, { chart, layers, sections: resolveSections(layers) });
  }
  return { root, ...(set ? { set } : {}), charts };
}

/** The effective policy of `chart` (and `section`, for a chart with one map per service). */
export function pickPolicy(policies: AppPolicies, chart: string, section?: string): EffectivePolicy {
  const chartPolicy = policies.charts.get(chart);
  if (!chartPolicy || chartPolicy.sections.size === 0) {
    throw new PolicyLookupError(`chart "${chart}" has no conf.policy in any layer`);
  }
  return pickSection(chartPolicy.sections, section, `chart ${chart}`);
}

export function pickSection(sections: ReadonlyMap<string, EffectivePolicy>, section: string | undefined, what: string): EffectivePolicy {
  const wanted = section ?? '';
  const found = sections.get(wanted);
  if (found) return found;
  const named = [...sections.keys()].filter((s) => s !== '');
  if (section === undefined) {
    throw new PolicyLookupError(`${what} keeps one policy per service; choose one with --section (${named.join(', ')})`);
  }
  const guess = nearest(wanted, named);
  throw new PolicyLookupError(
    `${what} has no policy section "${wanted}"` +
      (named.length > 0 ? ` (sections: ${named.join(', ')}${guess ? `; did you mean "${guess}"?` : ''})` : ''),
  );
}

export interface AppLintOptions {
  readonly set?: SetChoice;
  readonly chart?: string;
}

/**
 * Lints every chart's effective policy (each section on its own), the
 * selected set's files (a file for a chart the app lacks), and horizon-like
 * sections against the service they copy.
 */
export async function lintApp(appRoot: string, options: AppLintOptions = {}): Promise<{ findings: LintFinding[]; policies: AppPolicies }> {
  const policies = await loadAppPolicies(appRoot, options);
  const declared: DeclaredRoles | undefined = policies.set ? declaredRolesOf(policies.set) : undefined;
  const findings: LintFinding[] = [];
  for (const [chart, chartPolicy] of policies.charts) {
    for (const [section, policy] of chartPolicy.sections) {
      const scope = section === '' ? chart : `${chart}/${section}`;
      findings.push(...lintResolved(policy, { scope, ...(declared ? { declaredRoles: declared } : {}) }));
    }
  }
  if (policies.set && options.chart === undefined) {
    const known = await appCharts(policies.root);
    if (known.length > 0) {
      for (const [chart, file] of policies.set.files) {
        if (known.includes(chart)) continue;
        const guess = nearest(chart, known);
        findings.push({
          code: 'unknown-chart',
          severity: 'warning',
          scope: chart,
          message: `policy set ${policies.set.name} has a file for chart "${chart}", which the app does not have${guess ? ` (did you mean "${guess}"?)` : ''}`,
          location: { file, line: 1, column: 1 },
        });
      }
    }
  }
  if (policies.set) findings.push(...sectionDrift(policies, policies.set));
  return { findings: sortFindings(findings), policies };
}

/**
 * A chart keeping one policy per service (horizon) decides what the UI
 * offers; the service decides what the API allows. Where a section is named
 * after another chart of the app, every action both define must give each
 * declared role the same matrix cell.
 */
function sectionDrift(policies: AppPolicies, set: PolicySet): LintFinding[] {
  const findings: LintFinding[] = [];
  const roles = personaRoles(set);
  const implied = set.impliedRoles;
  for (const [chart, chartPolicy] of policies.charts) {
    for (const [section, copy] of chartPolicy.sections) {
      if (section === '') continue;
      const service = policies.charts.get(section)?.sections.get('');
      if (!service) continue;
      for (const action of matrixActions(copy)) {
        const copyRule = copy.rules.get(action);
        if (!copyRule?.expr || !service.rules.get(action)?.expr) continue;
        const differences = roles.flatMap((role) => {
          const mine = matrixCell(copy, action, role, { implied });
          const theirs = matrixCell(service, action, role, { implied });
          return mine === theirs ? [] : [`${role}: ${mine} here, ${theirs} in ${section}`];
        });
        if (differences.length === 0) continue;
        findings.push({
          code: 'horizon-drift',
          severity: 'warning',
          scope: `${chart}/${section}`,
          rule: action,
          message: `"${action}" decides differently from chart ${section}'s own policy (${differences.join('; ')}); the dashboard will offer what the API refuses, or hide what it allows`,
          location: copyRule.source.location,
        });
      }
    }
  }
  return findings;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
