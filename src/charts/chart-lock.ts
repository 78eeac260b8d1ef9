/**
 * Chart.lock as `helm dependency build` reads it: the exact version of each
 * dependency Chart.yaml declares, and a digest tying the lock to the
 * Chart.yaml it was made from — sha256 over the JSON of
 * `[Chart.yaml dependencies, locked dependencies]` as Go marshals Helm's
 * Dependency struct (helm pkg/downloader Manager.Build, resolver.HashReq).
 * A lock whose digest does not match is out of sync with Chart.yaml, and
 * Helm refuses to build from it; so does flotilla.
 */
import { createHash } from 'node:crypto';
import { FIXED_MTIME } from '../tarball/index.js';
import { dumpYaml, parseYamlValue } from '../yaml/index.js';
import { ChartFileError } from './errors.js';
import { goJson, sortedMaps } from './go-json.js';
import type { ChartDependency } from './types.js';

export const CHART_LOCK = 'Chart.lock';

/** One entry of Chart.lock's `dependencies`. */
export interface LockedDependency {
  readonly name: string;
  readonly version: string;
  readonly repository: string;
}

export interface ChartLock {
  readonly dependencies: readonly LockedDependency[];
  readonly digest: string;
  /** Where the lock was read, and the line of its digest, for messages. */
  readonly file: string;
  readonly digestLine: number;
}

/** Reads Chart.lock text; `file` names it in errors. */
export function parseChartLock(text: string, file: string): ChartLock {
  const fail = (what: string): never => {
    throw new ChartFileError(`${what} (expected a Chart.lock as helm dependency update writes it)`, { file, line: 0, column: 0 });
  };
  const value = parseYamlValue(text, file) as { dependencies?: unknown; digest?: unknown } | undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('not a YAML map');
  if (typeof value.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(value.digest)) return fail('digest: not a sha256:<64 hex digits> digest');
  const entries = value.dependencies ?? [];
  if (!Array.isArray(entries)) return fail('dependencies: not a list');
  const dependencies = entries.map((entry: unknown, index): LockedDependency => {
    const e = entry as Partial<Record<keyof LockedDependency, unknown>> | null;
    const field = (key: keyof LockedDependency): string => {
      const v = e?.[key];
      // Helm reads a version written as a number as its text.
      if (typeof v === 'string' || (key !== 'name' && typeof v === 'number')) return String(v);
      if (key === 'repository' && (v === undefined || v === null)) return '';
      return fail(`dependencies[${index}].${key}: not a string`);
    };
    return { name: field('name'), version: field('version'), repository: field('repository') };
  });
  const digestLine = text.split('\n').findIndex((line) => line.startsWith('digest:')) + 1;
  return { dependencies, digest: value.digest, file, digestLine };
}

/** A dependency as Go marshals Helm's Dependency struct: its field order, empty fields omitted (name and repository always written). */
function dependencyJson(d: Partial<ChartDependency> & { readonly name: string }): Record<string, unknown> {
  const out: Record<string, unknown> = { name: d.name };
  if (d.version) out.version = d.version;
  out.repository = d.repository ?? '';
  if (d.condition) out.condition = d.condition;
  if (d.tags && d.tags.length > 0) out.tags = d.tags;
  if (d.importValues && d.importValues.length > 0) out['import-values'] = sortedMaps(d.importValues);
  if (d.alias) out.alias = d.alias;
  return out;
}

/** The digest `helm dependency update` writes into Chart.lock for these Chart.yaml dependencies and these locked versions. */
export function lockDigest(declared: readonly ChartDependency[], locked: readonly LockedDependency[]): string {
  const json = goJson([declared.map(dependencyJson), locked.map(dependencyJson)]);
  return `sha256:${createHash('sha256').update(json).digest('hex')}`;
}

/**
 * The locked entry of each declared dependency (Helm writes them in
 * Chart.yaml's order), after Helm's check that the lock is in sync with
 * Chart.yaml; refused with the message Helm gives, naming the file.
 */
export function lockedVersions(declared: readonly ChartDependency[], lock: ChartLock): readonly LockedDependency[] {
  const digest = lockDigest(declared, lock.dependencies);
  const aligned = lock.dependencies.length === declared.length && declared.every((d, i) => lock.dependencies[i]!.name === d.name);
  if (digest !== lock.digest || !aligned) {
    throw new ChartFileError(
      `out of sync with the dependencies of Chart.yaml (its digest ${lock.digest}, expected ${digest} for these dependencies and locked versions); run \`helm dependency update\` to write it again`,
      { file: lock.file, line: lock.digestLine, column: 1 },
    );
  }
  return lock.dependencies;
}

/**
 * The Chart.lock `helm dependency update` writes (keys sorted, as Helm's
 * YAML writer sorts them), `generated` at the fixed time of every archive
 * entry rather than the clock's, so two builds write the same bytes.
 */
export function chartLockText(declared: readonly ChartDependency[], locked: readonly LockedDependency[]): string {
  const dependencies = locked.map((d) => ({ name: d.name, repository: d.repository, version: d.version }));
  return dumpYaml({ dependencies, digest: lockDigest(declared, locked), generated: FIXED_MTIME.toISOString().replace('.000Z', 'Z') });
}
