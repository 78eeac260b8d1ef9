/**
 * Names that refer to something else in the app — a service, a group, a
 * chart, a release — checked where they are written. A typo in any of them
 * would otherwise switch something off silently, so each is an error at the
 * faulty name's own line, with the nearest existing name.
 */
import { basename } from 'node:path';
import type { Diagnostic, DocPath, SourceLocation } from '../diagnostics/index.js';
import { getNode, type ValueNode } from '../yaml/index.js';
import type { FileSource } from '../files/index.js';
import { APP_FILES } from './layout.js';
import { nearest, unknownName } from '../names/index.js';
import type { Release } from './releases.js';

function problem(message: string, location: SourceLocation | undefined, path?: DocPath): Diagnostic {
  return { severity: 'error', message, ...(location ? { location } : {}), ...(path ? { path } : {}) };
}

/**
 * A name that matches nothing: an error when it is a letter or two from an
 * existing name (a typo switching something off), else a warning that it
 * applies to nothing (a spec or catalog shared with apps that have it).
 */
function unknownReference(context: string, what: string, name: string, known: ReadonlySet<string>, location: SourceLocation, path: DocPath): Diagnostic {
  const typo = nearest(name, [...known]) !== undefined;
  return {
    ...problem(`${context}${unknownName(what, name, known)}${typo ? '' : '; it applies to nothing'}`, location, path),
    severity: typo ? 'error' : 'warning',
  };
}

/** Each item of a list node that is not one of `known`; `report` says how (default: unknownReference). */
function unknownItems(
  node: ValueNode | undefined,
  path: DocPath,
  what: string,
  known: ReadonlySet<string>,
  context: string,
  report: typeof unknownReference = unknownReference,
): Diagnostic[] {
  if (node?.kind !== 'seq') return [];
  return node.items.flatMap((item, i) =>
    item.kind === 'scalar' && typeof item.value === 'string' && !known.has(item.value)
      ? [report(context, what, item.value, known, item.origin.location, [...path, i])]
      : [],
  );
}

/**
 * A name in metadata `disabled_charts` that no release's chart has: sysinv
 * accepts it (it disables what is there), so it is a warning, whatever it
 * resembles, with the nearest chart.
 */
function unknownDisabledChart(context: string, what: string, name: string, known: ReadonlySet<string>, location: SourceLocation, path: DocPath): Diagnostic {
  return {
    ...problem(`${context}${unknownName(what, name, known)}; it disables nothing here (StarlingX accepts it too)`, location, path),
    severity: 'warning',
  };
}

export interface ReferenceInputs {
  readonly releases: readonly Release[];
  readonly specNode: ValueNode | undefined;
  readonly metadataRoot: ValueNode | undefined;
  readonly imageTargets: ReadonlyMap<string, readonly { readonly chart: string; readonly location: SourceLocation }[]>;
  readonly files: FileSource;
}

export function checkReferences(input: ReferenceInputs): Diagnostic[] {
  const { releases, specNode, files } = input;
  const charts = new Set(releases.map((r) => r.chart));
  const services = new Set(releases.flatMap((r) => (r.service ? [r.service] : [])));
  const groups = new Set(releases.flatMap((r) => (r.group ? [r.group] : [])));
  const out: Diagnostic[] = [];

  out.push(...unknownItems(getNode(specNode, ['features', 'services']), ['features', 'services'], 'service', services, 'features.services: '));
  const groupsNode = getNode(specNode, ['common', 'groups']);
  if (groupsNode?.kind === 'map') {
    for (const [group, node] of groupsNode.entries) {
      if (!groups.has(group)) out.push(unknownReference('common.groups: ', 'group', group, groups, node.origin.location, ['common', 'groups', group]));
    }
  }
  out.push(...unknownItems(getNode(input.metadataRoot, ['disabled_charts']), ['disabled_charts'], 'chart', charts, 'disabled_charts: ', unknownDisabledChart));
  // An image field landing in a chart no release uses is `images list`'s warning; here only the typo is reported.
  for (const [field, targets] of input.imageTargets) {
    for (const target of targets) {
      const finding = charts.has(target.chart)
        ? undefined
        : unknownReference(`image field ${field}: `, 'chart', target.chart, charts, target.location, [field, target.chart]);
      if (finding?.severity === 'error') out.push(finding);
    }
  }
  // A release may name its own static overrides file (staticOverrides); any other file there is read by nobody.
  const staticFiles = new Set(releases.map((r) => r.staticOverrides));
  for (const [folder, suffix] of [
    [APP_FILES.static, '.yaml'],
    [APP_FILES.templates, '.yaml.hbs'],
  ] as const) {
    for (const entry of files.list(folder)) {
      if (entry.kind !== 'file' || staticFiles.has(`${folder}/${entry.name}`)) continue;
      const chart = entry.name.endsWith(suffix) ? basename(entry.name, suffix) : undefined;
      if (chart !== undefined && charts.has(chart)) continue;
      const expected = `files here are named <chart>${suffix}`;
      const location = { file: `${folder}/${entry.name}`, line: 1, column: 1 };
      if (chart === undefined) out.push({ ...problem(`${expected}, so nothing reads this one`, location), severity: 'warning' });
      else out.push(unknownReference('', 'chart', chart, charts, location, []));
    }
  }
  return out;
}
