/**
 * Policies of an app source tree: each chart's `conf.policy` layers, the
 * selected policy set, and the app-wide lint.
 */
import { loadApp, type App, type Release } from '../app/index.js';
import { chartMetadata } from '../charts/index.js';
import type { Diagnostic, SourceLocation } from '../diagnostics/index.js';
import { describeKind, getNode, type ValueNode } from '../yaml/index.js';
import { buildLayers, type LayerKind as ValuesLayerKind, type LayerProviders } from '../values/index.js';
import { PolicyLookupError } from './errors.js';
import { nearest } from '../names/index.js';
import { lintResolved, sortFindings, type DeclaredRoles, type LintFinding } from './linter.js';
import { declaredRolesOf, loadPolicyFile, loadPolicySet, parsePolicyPath, policyPathCandidates, POLICY_VALUES_PATH } from './loaders.js';
import { matrixActions, matrixCell } from './matrix.js';
import { resolveSections, type EffectivePolicy } from './policy.js';
import type { PolicyLayer, PolicySet, RuleSource } from './types.js';
import { personaRoles } from './roles.js';

/**
 * Which set to use: a name, `null` for none, or undefined for the one the
 * merged deployment spec selects (`features.policies`).
 */
export type SetChoice = string | null | undefined;

async function resolveSetChoice(app: App, choice: SetChoice): Promise<PolicySet | undefined> {
  const name = choice === undefined ? app.policySet : choice;
  return name === null || name === undefined || name === 'none' ? undefined : loadPolicySet(app.root, name);
}

/** Values layers whose files the policy loader reads itself, for exact positions inside each rule. */
const FILE_LAYERS: ReadonlySet<ValuesLayerKind> = new Set(['chart', 'static', 'policy']);

/**
 * The policy layers of one release, lowest first: every values layer that
 * sets the chart's rules (chart defaults, static, template, policy set,
 * plugin, common, group, service, user), as the values engine builds them.
 * The rules live where the set declares (`policyPaths`), else where the
 * chart declares (Chart.yaml annotation POLICY_PATH_ANNOTATION), else at the
 * first of `conf.policy` and openstack-helm's `conf.<chart>.policy` a layer sets.
 */
export async function appPolicyLayers(app: App, release: Release, options: { set?: SetChoice; providers?: LayerProviders } = {}): Promise<PolicyLayer[]> {
  const set = await resolveSetChoice(app, options.set);
  const source: App = { ...app, policySet: set?.name };
  const valuesLayers = await buildLayers(source, release, options.providers);
  const path =
    set?.policyPaths.get(release.chart) ??
    chartDeclaredPolicyPath(app, release) ??
    policyPathCandidates(release.chart).find((candidate) => valuesLayers.some((layer) => getNode(layer.root, [...candidate]) !== undefined)) ??
    POLICY_VALUES_PATH;
  const layers: PolicyLayer[] = [];
  for (const layer of valuesLayers) {
    const policy = getNode(layer.root, [...path]);
    if (!policy) continue;
    const kind = layer.kind === 'chart' ? 'defaults' : 'override';
    if (layer.file && FILE_LAYERS.has(layer.kind)) {
      const label = layer.kind === 'chart' ? 'chart defaults' : layer.kind === 'policy' && set ? `policy set ${set.name}` : layer.label;
      layers.push(...(await loadPolicyFile(app.path(layer.file), { label, kind, valuesPath: path })));
    } else layers.push(...policyLayersOfNode(policy, layer.label, kind));
  }
  return layers;
}

/** The Chart.yaml annotation by which a chart says where its values keep its rule maps (a dotted path). */
const POLICY_PATH_ANNOTATION = 'flotilla.io/policy-values-path';

function chartDeclaredPolicyPath(app: App, release: Release): readonly string[] | undefined {
  // The app parsed every release's Chart.yaml when it was assembled.
  const chartYaml = app.chartYaml(release);
  const declared = chartYaml && chartMetadata(chartYaml).annotations?.[POLICY_PATH_ANNOTATION];
  return declared === undefined ? undefined : parsePolicyPath(declared);
}

/** Policy layers of a values tree (layers computed in memory: templates, spec sections, plugins). */
function policyLayersOfNode(node: ValueNode, label: string, kind: 'defaults' | 'override'): PolicyLayer[] {
  if (node.kind !== 'map' || node.entries.size === 0) return [];
  const sectioned = [...node.entries.values()].every((v) => v.kind === 'map');
  const sections: [string, ValueNode][] = sectioned ? [...node.entries] : [['', node]];
  return sections.map(([section, rulesNode]) => {
    const rules = new Map<string, RuleSource>();
    const removed = new Map<string, SourceLocation>();
    const problems: Diagnostic[] = [];
    for (const [name, value] of rulesNode.kind === 'map' ? rulesNode.entries : []) {
      const location = value.origin.location;
      if (value.kind === 'scalar' && value.value === null) removed.set(name, location);
      else if (value.kind === 'scalar' && typeof value.value === 'string') rules.set(name, { name, text: value.value, location, keyLocation: location });
      else problems.push({ severity: 'error', message: `rule "${name}" must be a string, got ${describeKind(value)}`, location });
    }
    return { label, file: sections[0]?.[1].origin.location.file ?? '', kind, section, rules, removed, problems };
  });
}

/** Charts of the app's releases, first release of each. */
function releasesByChart(app: App): Map<string, Release> {
  const out = new Map<string, Release>();
  for (const release of app.releases) if (!out.has(release.chart)) out.set(release.chart, release);
  return out;
}

/** Every chart the app's releases use. */
function appCharts(app: App): string[] {
  return [...releasesByChart(app).keys()].sort();
}

/** One chart's policy: each section stacked (one section `""` unless the chart keeps a map per service). */
export interface ChartPolicy {
  readonly chart: string;
  readonly layers: readonly PolicyLayer[];
  readonly sections: ReadonlyMap<string, EffectivePolicy>;
}

export interface AppPolicies {
  readonly root: string;
  readonly app: App;
  readonly set?: PolicySet;
  readonly charts: ReadonlyMap<string, ChartPolicy>;
}

/** The policy of every chart that has one (or of `chart` only). */
export async function loadAppPolicies(appRoot: string, options: { set?: SetChoice; chart?: string; deployment?: string } = {}): Promise<AppPolicies> {
  const app = await loadApp(appRoot, options.deployment ? { deployment: options.deployment } : {});
  const set = await resolveSetChoice(app, options.set);
  const setChoice: SetChoice = set?.name ?? null;
  const byChart = releasesByChart(app);
  const candidates = [...byChart.keys()].sort();
  if (options.chart !== undefined && !candidates.includes(options.chart)) {
    const guess = nearest(options.chart, candidates);
    throw new PolicyLookupError(`the app has no chart "${options.chart}"${guess ? ` (did you mean "${guess}"?)` : ''}`);
  }
  const charts = new Map<string, ChartPolicy>();
  for (const chart of options.chart !== undefined ? [options.chart] : candidates) {
    const layers = await appPolicyLayers(app, byChart.get(chart) as Release, { set: setChoice });
    if (layers.length === 0 && options.chart === undefined) continue;
    charts.set(chart, { chart, layers, sections: resolveSections(layers) });
  }
  return { root: app.root, app, ...(set ? { set } : {}), charts };
}

/** The effective policy of `chart` (and `section`, for a chart with one map per service). */
export function pickPolicy(policies: Pick<AppPolicies, 'charts'>, chart: string, section?: string): EffectivePolicy {
  const chartPolicy = policies.charts.get(chart);
  if (!chartPolicy || chartPolicy.sections.size === 0) {
    throw new PolicyLookupError(`chart "${chart}" has no rules in any layer (conf.policy, conf.${chart}.policy, or the set's policyPaths)`);
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
    const known = appCharts(policies.app);
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

/** Service types as horizon names its policy files, and the chart of each service. */
const SERVICE_TYPE_CHARTS: Readonly<Record<string, string>> = {
  identity: 'keystone',
  compute: 'nova',
  image: 'glance',
  network: 'neutron',
  volume: 'cinder',
  orchestration: 'heat',
  placement: 'placement',
};

/** The chart a section copies: named after it (`nova`, `nova_policy`) or after its service type (`compute`). */
function serviceChartOf(section: string, charts: ReadonlyMap<string, unknown>): string | undefined {
  const name = section.replace(/_policy$/, '');
  const candidates = [section, name, SERVICE_TYPE_CHARTS[name]];
  return candidates.find((c): c is string => c !== undefined && charts.has(c));
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
      const serviceChart = serviceChartOf(section, policies.charts);
      const service = serviceChart === undefined ? undefined : policies.charts.get(serviceChart)?.sections.get('');
      if (!service) continue;
      for (const action of matrixActions(copy)) {
        const copyRule = copy.rules.get(action);
        if (!copyRule?.expr || !service.rules.get(action)?.expr) continue;
        const differences = roles.flatMap((role) => {
          const mine = matrixCell(copy, action, role, { implied });
          const theirs = matrixCell(service, action, role, { implied });
          return mine === theirs ? [] : [`${role}: ${mine} here, ${theirs} in ${serviceChart}`];
        });
        if (differences.length === 0) continue;
        findings.push({
          code: 'horizon-drift',
          severity: 'warning',
          scope: `${chart}/${section}`,
          rule: action,
          message: `"${action}" decides differently from chart ${serviceChart}'s own policy (${differences.join('; ')}); the dashboard will offer what the API refuses, or hide what it allows`,
          location: copyRule.source.location,
        });
      }
    }
  }
  return findings;
}
