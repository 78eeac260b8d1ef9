/**
 * `flotilla policy lint|check|matrix`: parses options, calls src/policies,
 * prints. The run* functions return the exit code and write through an
 * `Output`, so tests can call them directly.
 */
import { statSync } from 'node:fs';
import { relative } from 'node:path';
import type { Command } from 'commander';
import { formatLocation } from '../../diagnostics/index.js';
import {
  evaluate,
  expandRoles,
  lintApp,
  lintFiles,
  loadAppPolicies,
  loadFilePolicies,
  parsePolicyPath,
  pickPolicy,
  pickSection,
  personaRoles,
  policyMatrix,
  summarize,
  type Credentials,
  type EffectivePolicy,
  type LintFinding,
  type PolicySet,
  type PolicyValue,
  type SetChoice,
  type TraceNode,
} from '../../policies/index.js';
import type { CommandContext } from '../context.js';
import { consoleOutput, formatTable, printData, type Output } from '../output.js';
import { collect, OUTPUT_FORMATS, outputOption, UsageError } from '../options.js';

/** Exit code of `policy check` when the request is denied. */
export const EXIT_DENY = 3;

type Inputs = { kind: 'app'; root: string } | { kind: 'files'; files: string[] };

/** No path: the app in the current folder. One folder: an app. Otherwise: policy files. */
export function classifyInputs(paths: readonly string[]): Inputs {
  if (paths.length === 0) return { kind: 'app', root: '.' };
  const kinds = paths.map((p) => {
    try {
      return statSync(p).isDirectory() ? 'dir' : 'file';
    } catch {
      throw new UsageError(`${p}: no such file or folder`);
    }
  });
  if (kinds.includes('dir')) {
    if (paths.length > 1) throw new UsageError('give one app folder, or policy files — not several folders or a mix');
    return { kind: 'app', root: paths[0] ?? '.' };
  }
  return { kind: 'files', files: [...paths] };
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function setChoice(value: string | undefined): SetChoice {
  return value === undefined ? undefined : value === 'none' ? null : value;
}

/** `k=v` pairs; dotted keys build nested maps when `nested` (credentials), stay flat otherwise (targets). */
export function parseAssignments(pairs: readonly string[], what: string, nested: boolean): Record<string, PolicyValue> {
  const out: Record<string, PolicyValue> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`${what} "${pair}" must read KEY=VALUE`);
    const key = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (!nested || !key.includes('.')) {
      out[key] = value;
      continue;
    }
    const parts = key.split('.');
    let node: Record<string, PolicyValue> = out;
    for (const part of parts.slice(0, -1)) {
      const next = node[part];
      if (next === undefined || next === null || typeof next !== 'object' || Array.isArray(next)) node[part] = {};
      node = node[part] as Record<string, PolicyValue>;
    }
    node[parts[parts.length - 1] ?? key] = value;
  }
  return out;
}

/** `--values-path conf.horizon.policy` → where policy files keep their rules. */
function valuesPathOption(dotted: string | undefined): { valuesPath?: readonly string[] } {
  if (dotted === undefined) return {};
  const path = parsePolicyPath(dotted);
  if (path.length === 0) throw new UsageError(`--values-path "${dotted}" is not a dotted values path such as conf.horizon.policy`);
  return { valuesPath: path };
}

/** `horizon/nova` → chart horizon, section nova. */
function chartAndSection(chart: string | undefined, section: string | undefined): { chart?: string; section?: string } {
  if (chart?.includes('/')) {
    const [c = '', s = ''] = chart.split('/', 2);
    if (section !== undefined && section !== s) throw new UsageError(`--chart ${chart} and --section ${section} disagree`);
    return { chart: c, section: s };
  }
  return { ...(chart !== undefined ? { chart } : {}), ...(section !== undefined ? { section } : {}) };
}

// ---------------------------------------------------------------- lint

export interface LintCommandOptions {
  readonly set?: string;
  readonly chart?: string;
  readonly defaults?: readonly string[];
  readonly declaredRoles?: string;
  readonly stack?: boolean;
  readonly valuesPath?: string;
  readonly strict?: boolean;
  readonly verbose?: boolean;
  readonly output?: string;
}

export async function runLint(paths: readonly string[], opts: LintCommandOptions, io: Output = consoleOutput): Promise<number> {
  const inputs = classifyInputs(paths);
  let findings: LintFinding[];
  let what: string;
  if (inputs.kind === 'app') {
    if (opts.defaults?.length || opts.declaredRoles || opts.stack || opts.valuesPath) {
      throw new UsageError(
        '--defaults, --declared-roles, --stack and --values-path are for policy files, not an app (an app declares the place in its policy set: policyPaths)',
      );
    }
    const result = await lintApp(inputs.root, { set: setChoice(opts.set), ...(opts.chart ? { chart: opts.chart } : {}) });
    findings = result.findings;
    const charts = [...result.policies.charts.keys()];
    what = `${charts.length} chart${charts.length === 1 ? '' : 's'}${result.policies.set ? `, policy set ${result.policies.set.name}` : ', no policy set'}`;
  } else {
    if (opts.set !== undefined || opts.chart !== undefined) throw new UsageError('--set and --chart are for an app folder, not policy files');
    const declared = opts.declaredRoles !== undefined ? { names: list(opts.declaredRoles), declaredBy: '--declared-roles' } : undefined;
    const result = await lintFiles(inputs.files, {
      ...(opts.defaults ? { defaults: opts.defaults } : {}),
      ...(declared ? { declaredRoles: declared } : {}),
      ...(opts.stack ? { stack: true } : {}),
      ...valuesPathOption(opts.valuesPath),
    });
    findings = result.findings;
    const sets = [...new Set(result.policies.flatMap((p) => (p.set ? [p.set.name] : [])))];
    const count = result.policies.length;
    what = `${count} ${opts.stack ? 'stacked ' : ''}polic${count === 1 ? 'y' : 'ies'}${sets.length > 0 ? `, roles of policy set ${sets.join(', ')}` : ''}`;
  }
  const shown = opts.verbose ? findings : findings.filter((f) => f.severity !== 'info');
  const items = shown.map((f) => (f.location ? { ...f, location: { ...f.location, file: relative(process.cwd(), f.location.file) || f.location.file } } : f));
  printData(io, opts.output ?? 'table', 'PolicyFindings', { items }, () => shown.map(formatFinding));
  const summary = summarize(findings);
  const hidden = opts.verbose ? 0 : summary.infos;
  io.err(
    `policy lint (${what}): ${plural(summary.errors, 'error')}, ${plural(summary.warnings, 'warning')}` +
      (hidden > 0 ? ` (${plural(hidden, 'note')} not shown; --verbose shows them)` : opts.verbose ? `, ${plural(summary.infos, 'note')}` : ''),
  );
  return summary.errors > 0 || (opts.strict && summary.warnings > 0) ? 1 : 0;
}

export function formatFinding(f: LintFinding): string {
  const where = f.location ? `${formatLocation(f.location)}: ` : '';
  const severity = f.severity === 'info' ? 'note' : f.severity;
  return `${where}${severity}: ${f.scope ? `${f.scope}: ` : ''}${f.message} [${f.code}]`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

// ---------------------------------------------------------------- check / matrix inputs

interface PolicyInputOptions {
  readonly set?: string;
  readonly chart?: string;
  readonly section?: string;
  readonly defaults?: readonly string[];
  readonly stack?: boolean;
  readonly valuesPath?: string;
}

interface LoadedPolicies {
  readonly kind: 'app' | 'files';
  /** App: chart name → its sections. Files: file label (or the stacked files) → sections. */
  readonly policies: ReadonlyMap<string, { readonly sections: ReadonlyMap<string, EffectivePolicy>; readonly set?: PolicySet }>;
}

async function loadInputs(paths: readonly string[], opts: PolicyInputOptions, chart: string | undefined): Promise<LoadedPolicies> {
  const inputs = classifyInputs(paths);
  if (inputs.kind === 'app') {
    if (opts.defaults?.length || opts.stack || opts.valuesPath) throw new UsageError('--defaults, --stack and --values-path are for policy files, not an app');
    const policies = await loadAppPolicies(inputs.root, { set: setChoice(opts.set), ...(chart !== undefined ? { chart } : {}) });
    const set = policies.set;
    return {
      kind: 'app',
      policies: new Map([...policies.charts].map(([name, c]) => [name, { sections: c.sections, ...(set ? { set } : {}) }])),
    };
  }
  if (opts.set !== undefined || chart !== undefined) throw new UsageError('--set and --chart are for an app folder, not policy files');
  const files = await loadFilePolicies(inputs.files, {
    ...(opts.defaults ? { defaults: opts.defaults } : {}),
    ...(opts.stack ? { stack: true } : {}),
    ...valuesPathOption(opts.valuesPath),
  });
  return { kind: 'files', policies: new Map(files.map((f) => [f.label, { sections: f.sections, ...(f.set ? { set: f.set } : {}) }])) };
}

/** The one policy a question is about. */
function pick(loaded: LoadedPolicies, chart: string | undefined, section: string | undefined): { policy: EffectivePolicy; set?: PolicySet } {
  if (loaded.kind === 'files') {
    const entries = [...loaded.policies.values()];
    const [only] = entries;
    if (entries.length !== 1 || !only) throw new UsageError('one question, one policy: give one file, or --stack to stack the files as layers');
    return { policy: pickSection(only.sections, section, 'the file'), ...(only.set ? { set: only.set } : {}) };
  }
  if (chart === undefined) throw new UsageError('--chart is required with an app folder');
  const entry = loaded.policies.get(chart);
  const policy = pickPolicy({ charts: new Map([[chart, { chart, layers: [], sections: entry?.sections ?? new Map() }]]) }, chart, section);
  return { policy, ...(entry?.set ? { set: entry.set } : {}) };
}

// ---------------------------------------------------------------- check

export interface CheckCommandOptions extends PolicyInputOptions {
  readonly action: string;
  readonly roles?: string;
  readonly target?: readonly string[];
  readonly creds?: readonly string[];
  readonly output?: string;
}

export async function runCheck(paths: readonly string[], opts: CheckCommandOptions, io: Output = consoleOutput): Promise<number> {
  const { chart, section } = chartAndSection(opts.chart, opts.section);
  const loaded = await loadInputs(paths, opts, chart);
  const { policy, set } = pick(loaded, chart, section);
  const assigned = list(opts.roles);
  const roles = expandRoles(assigned, set?.impliedRoles);
  const extraCreds = parseAssignments(opts.creds ?? [], '--creds', true);
  if ('roles' in extraCreds) throw new UsageError('give roles with --roles, not --creds roles=…');
  const creds: Credentials = { ...extraCreds, roles };
  const target = parseAssignments(opts.target ?? [], '--target', false);
  const decision = evaluate(policy, opts.action, creds, target, { undefinedAction: 'error' });
  printData(io, opts.output ?? 'table', 'PolicyDecision', { action: decision.action, allowed: decision.allowed, roles, trace: decision.trace }, () => {
    const where = [chart, section ?? (policy.section || undefined)].filter((s) => s).join('/');
    const implied = roles.length > assigned.length ? ` (implied: ${roles.slice(assigned.length).join(', ')})` : '';
    return [
      `${decision.allowed ? 'ALLOW' : 'DENY'}  ${where ? `${where}  ` : ''}${opts.action}  roles: ${assigned.join(', ') || '(none)'}${implied}`,
      ...formatTrace(decision.trace),
    ];
  });
  return decision.allowed ? 0 : EXIT_DENY;
}

/** The trace as indented lines: `true`/`false`, then what was checked and where it is defined. */
export function formatTrace(node: TraceNode, depth = 1): string[] {
  const pad = '  '.repeat(depth);
  const mark = node.result ? 'true ' : 'false';
  const lines: string[] = [];
  switch (node.kind) {
    case 'rule': {
      const def = node.text !== undefined ? ` = "${node.text}"` : '';
      const where = node.location ? `  (${formatLocation(node.location)}, ${node.layer ?? ''})` : '';
      const note = node.note ? `  — ${node.note}` : '';
      lines.push(`${pad}${mark} ${depth === 1 ? '' : 'rule:'}${node.name}${def}${where}${note}`);
      const [only] = node.children;
      // A rule's expression is its only child: print the expression's own children right under the rule.
      if (only && node.children.length === 1 && only.kind !== 'check' && only.kind !== 'rule' && only.kind !== 'not') {
        lines.push(`${pad}  ${only.result ? 'true ' : 'false'} ${only.kind}`);
        for (const child of only.children) lines.push(...formatTrace(child, depth + 2));
      } else {
        for (const child of node.children) lines.push(...formatTrace(child, depth + 1));
      }
      break;
    }
    case 'check':
      lines.push(`${pad}${mark} ${node.text}${node.note ? `  (${node.note})` : ''}`);
      break;
    default:
      lines.push(`${pad}${mark} ${node.kind}`);
      for (const child of node.children) lines.push(...formatTrace(child, depth + 1));
  }
  return lines;
}

// ---------------------------------------------------------------- matrix

export interface MatrixCommandOptions extends PolicyInputOptions {
  readonly roles?: string;
  readonly actions?: string;
  readonly target?: readonly string[];
  readonly creds?: readonly string[];
  readonly output?: string;
}

export async function runMatrix(paths: readonly string[], opts: MatrixCommandOptions, io: Output = consoleOutput): Promise<number> {
  const format = opts.output ?? 'table';
  if (!MATRIX_FORMATS.includes(format)) throw new UsageError(`--output must be ${MATRIX_FORMATS.join(', ')}, not "${format}"`);
  const { chart, section } = chartAndSection(opts.chart, opts.section);
  const loaded = await loadInputs(paths, opts, chart);
  const sets = [...loaded.policies.values()].flatMap((p) => (p.set ? [p.set] : []));
  const roles = opts.roles !== undefined ? list(opts.roles) : sets[0] ? personaRoles(sets[0]) : [];
  if (roles.length === 0) throw new UsageError('no roles to show: give --roles (no policy set declares them here)');
  const creds = parseAssignments(opts.creds ?? [], '--creds', true);
  const target = parseAssignments(opts.target ?? [], '--target', false);
  const filter = opts.actions !== undefined ? globToRegExp(opts.actions) : undefined;

  const tables: { scope: string; policy: EffectivePolicy; set?: PolicySet }[] = [];
  for (const [name, entry] of loaded.policies) {
    if (loaded.kind === 'app' && chart !== undefined && name !== chart) continue;
    for (const [sectionName, policy] of entry.sections) {
      if (section !== undefined && sectionName !== section) continue;
      tables.push({ scope: [name, sectionName].filter((s) => s).join('/'), policy, ...(entry.set ? { set: entry.set } : {}) });
    }
  }
  if (section !== undefined && tables.length === 0) {
    pick(loaded, chart, section); // throws the helpful lookup error
  }
  const csvRows: string[][] = [];
  const data: { scope: string; action: string; cells: Record<string, string> }[] = [];
  tables.forEach(({ scope, policy, set }, i) => {
    const matrix = policyMatrix(policy, roles, { creds, target, ...(set ? { implied: set.impliedRoles } : {}) });
    const rows = matrix.rows.filter((r) => !filter || filter.test(r.action));
    if (format === 'json' || format === 'yaml') {
      for (const row of rows) data.push({ scope, action: row.action, cells: Object.fromEntries(roles.map((role, c) => [role, row.cells[c] ?? ''])) });
      return;
    }
    if (format === 'csv') {
      for (const row of rows) csvRows.push([scope, row.action, ...row.cells]);
      return;
    }
    if (tables.length > 1) io.out(`${i > 0 ? '\n' : ''}${scope}`);
    io.out(
      formatTable(
        ['ACTION', ...roles],
        rows.map((r) => [r.action, ...r.cells]),
      ),
    );
  });
  if (format === 'json' || format === 'yaml') printData(io, format, 'PolicyMatrix', { roles, items: data }, () => []);
  else if (format === 'csv') {
    io.out(csvLine([loaded.kind === 'app' ? 'chart' : 'policy', 'action', ...roles]));
    for (const row of csvRows) io.out(csvLine(row));
  } else {
    io.out("\nyes: any resource · project: the caller's project · own: the caller's own · no: never · others: not the caller's own (unusual)");
  }
  return 0;
}

const MATRIX_FORMATS = [...OUTPUT_FORMATS, 'csv'];

function csvLine(cells: readonly string[]): string {
  return cells.map((c) => (/[",\n\r]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(',');
}

/** `os_compute_api:servers:*` → a RegExp; `*` matches anything, `?` one character. */
function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

// ---------------------------------------------------------------- commander

export function register(program: Command, { io }: CommandContext): void {
  const policy = program
    .command('policy')
    .description('lint, check and tabulate oslo.policy RBAC rules (conf.policy of each chart, policy sets, override files)');

  policy
    .command('lint')
    .description(
      'lint the effective policy of every chart of an app (chart defaults → static overrides → policy set), or policy files (each on its own, or --stack)',
    )
    .argument('[PATHS...]', 'an app folder (default: .), or policy files (conf.policy override files, bare policy.yaml)')
    .option('--set <NAME>', 'app: policy set to use instead of features.policies ("none": no set)')
    .option('--chart <CHART>', 'app: lint this chart only')
    .option('--defaults <FILE>', 'files: rules the files override (repeatable), e.g. a chart values.yaml', collect)
    .option('--declared-roles <ROLES>', 'files: comma-separated roles rules may check (default: the set the files belong to)')
    .option('--stack', 'files: stack the files, in order, as layers of one policy (default: each file on its own)')
    .option('--values-path <PATH>', 'files: where the files keep their rules, e.g. conf.horizon.policy (default: conf.policy, else conf.<chart>.policy)')
    .option('--strict', 'exit non-zero on warnings too')
    .option('--verbose', 'also print notes (overridden defaults, redundant overrides, http checks)')
    .addOption(outputOption())
    .addHelpText('after', '\nExit codes: 0 no errors (and no warnings with --strict), 1 findings, 2 usage.')
    .action(async (paths: string[], opts: LintCommandOptions) => {
      process.exitCode = await runLint(paths, opts, io);
    });

  policy
    .command('check')
    .description('decide one request: allow or deny, with the trace of the rules that decided it')
    .argument('[PATHS...]', 'an app folder (default: .), or policy files')
    .requiredOption('--action <ACTION>', 'the API action (rule name), e.g. os_compute_api:servers:create')
    .option('--chart <CHART>', 'app: the chart (CHART/SECTION for a chart with one policy per service, e.g. horizon/nova)')
    .option('--section <SECTION>', 'the section of a chart or file that keeps one policy per service')
    .option('--roles <ROLES>', 'comma-separated roles of the caller (implied roles of the set are added)', '')
    .option('--target <KEY=VALUE...>', 'target fields, e.g. project_id=p1 target.user.id=u1')
    .option('--creds <KEY=VALUE...>', 'caller credentials besides roles, e.g. project_id=p1 user_id=u1')
    .option('--set <NAME>', 'app: policy set to use instead of features.policies ("none": no set)')
    .option('--defaults <FILE>', 'files: rules the files override (repeatable)', collect)
    .option('--stack', 'files: stack the files, in order, as layers of one policy')
    .option('--values-path <PATH>', 'files: where the files keep their rules, e.g. conf.horizon.policy (default: conf.policy, else conf.<chart>.policy)')
    .addOption(outputOption())
    .addHelpText('after', '\nExit codes: 0 allowed, 3 denied, 1 error, 2 usage (unknown chart, section or action).')
    .action(async (paths: string[], opts: CheckCommandOptions) => {
      process.exitCode = await runCheck(paths, opts, io);
    });

  policy
    .command('matrix')
    .description('actions × roles: yes (any resource), project, own, or no — per chart of an app, or for policy files')
    .argument('[PATHS...]', 'an app folder (default: .), or policy files')
    .option('--chart <CHART>', 'app: this chart only (CHART/SECTION allowed)')
    .option('--section <SECTION>', 'this section only')
    .option('--roles <ROLES>', 'comma-separated roles (columns); default: the roles the policy set declares')
    .option('--actions <GLOB>', 'only actions matching the glob, e.g. "os_compute_api:servers:*"')
    .option('--target <KEY=VALUE...>', 'extra target fields for every cell, e.g. visibility=public')
    .option('--creds <KEY=VALUE...>', 'extra credentials for every cell')
    .option('--set <NAME>', 'app: policy set to use instead of features.policies ("none": no set)')
    .option('--defaults <FILE>', 'files: rules the files override (repeatable)', collect)
    .option('--stack', 'files: stack the files, in order, as layers of one policy (default: a table per file)')
    .option('--values-path <PATH>', 'files: where the files keep their rules, e.g. conf.horizon.policy (default: conf.policy, else conf.<chart>.policy)')
    .addOption(outputOption(['csv']))
    .action(async (paths: string[], opts: MatrixCommandOptions) => {
      process.exitCode = await runMatrix(paths, opts, io);
    });
}
