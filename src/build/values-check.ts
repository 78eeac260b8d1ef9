/**
 * Build refuses what any other command refuses: every release's values
 * computed (static overrides parsed, templates rendered, layers merged,
 * plugins run offline) through the session's checks. A release that passed
 * is remembered in the build cache by a key of everything its values are
 * computed from: the app-wide inputs (metadata, release table, spec and
 * version files, plugin bundle…) and the files of its own layers
 * (`releaseLayerFiles`). After one edit only the releases that file feeds are
 * computed again; when none is, neither the plugins nor the template engine
 * load (docs/architecture.md, "Compression and build caching").
 */
import { createHash } from 'node:crypto';
import type { App, Release } from '../app/index.js';
import type { CacheFolder } from '../cache/index.js';
import type { Diagnostic } from '../diagnostics/index.js';
import type { Session } from '../session/index.js';
import { releaseLayerFiles } from '../values/index.js';

const FORMAT = 'flotilla-values-check/4';
const CACHE_FILE = 'values-check.json';

/** Inputs by name: app files by their path relative to the app root, plugin files as `plugins/<file>`, chart files as `<chartPath>/<file>` (see chartInputs). */
export type ValuesInputs = ReadonlyMap<string, string | Uint8Array>;

const CHART_INPUTS = ['Chart.yaml', 'values.yaml'] as const;
const chartInputName = (release: Release, file: string) => `${release.chartPath}/${file}`;

/** The chart files values are computed from, named as in ValuesInputs. */
function chartInputs(app: App): [string, string][] {
  return app.releases.flatMap((r) => CHART_INPUTS.map((f): [string, string] => [chartInputName(r, f), app.chartFile(r, f)?.text ?? '']));
}

/** The names of a release's own inputs (see ValuesInputs). */
function ownInputs(release: Release, policySet: string | undefined): string[] {
  const files = releaseLayerFiles(release, policySet);
  return [...CHART_INPUTS.map((f) => chartInputName(release, f)), files.static, files.template, ...(files.policy ? [files.policy] : [])];
}

function digest(names: Iterable<string>, inputs: ValuesInputs, seed: string): string {
  const hash = createHash('sha256').update(`${FORMAT}\0${seed}\0`);
  for (const name of [...names].sort()) {
    const data = inputs.get(name);
    hash.update(`${name}\0`);
    // Absent and empty are different inputs: a missing static overrides file is not an empty one.
    if (data === undefined) hash.update('\u0001absent\0');
    else hash.update(`${data.length}\0`).update(data);
  }
  return hash.digest('hex');
}

/** The key of each release: what it passed with, if it did (`strict`: whether values warnings were errors then). */
export function releaseCheckKeys(releases: readonly Release[], policySet: string | undefined, inputs: ValuesInputs, strict = false): Map<Release, string> {
  const own = new Map(releases.map((r) => [r, ownInputs(r, policySet)]));
  const owned = new Set([...own.values()].flat());
  const shared = digest(
    [...inputs.keys()].filter((name) => !owned.has(name)),
    inputs,
    strict ? 'app strict' : 'app',
  );
  return new Map(releases.map((r) => [r, digest(own.get(r) ?? [], inputs, `${shared}\0${r.name}`)]));
}

/** Values warnings as kept: only their text and place (they are printed again, never acted on). */
function isWarning(d: unknown): d is Diagnostic {
  const w = d as Partial<Diagnostic> | null;
  const at = w?.location as Partial<Diagnostic['location']> | undefined;
  return (
    w?.severity === 'warning' &&
    typeof w.message === 'string' &&
    (at === undefined || (typeof at === 'object' && at !== null && typeof at.file === 'string' && typeof at.line === 'number' && typeof at.column === 'number'))
  );
}

/** Keys that passed before, with the warnings each passed with; a missing, torn or unvouched entry counts as none (the check then runs, nothing is trusted). */
async function readPassed(cache: CacheFolder): Promise<Map<string, readonly Diagnostic[]>> {
  const passed = new Map<string, readonly Diagnostic[]>();
  try {
    const content = await cache.read(CACHE_FILE, 'values-check', FORMAT);
    const entry = content && (JSON.parse(content.toString('utf8')) as { passed?: unknown } | null);
    if (!entry || !Array.isArray(entry.passed)) return passed;
    for (const item of entry.passed as unknown[]) {
      if (!Array.isArray(item) || typeof item[0] !== 'string' || !/^[0-9a-f]{64}$/.test(item[0]) || !Array.isArray(item[1]) || !item[1].every(isWarning))
        continue;
      passed.set(item[0], item[1] as Diagnostic[]);
    }
    return passed;
  } catch {
    return new Map();
  }
}

/** The keys of releases that passed, with their values warnings, as a long-lived build keeps them between builds (see WatchMemory). */
export interface PassedReleases {
  passed?: ReadonlyMap<string, readonly Diagnostic[]>;
}

/**
 * Checks the releases whose inputs changed since they last passed; throws as
 * `Session.checkAll` does. `appInputs`: the app's files as shipped and the
 * plugin bundle; the charts' files are read here. Resolves to the values
 * warnings of every release (those of releases not checked again as they
 * were when they passed) and to the write of what passed into the cache,
 * for the caller to await when it likes (none when nothing new passed);
 * `kept` holds the same in memory.
 */
export async function checkValuesOnce(
  session: Session,
  appInputs: ValuesInputs,
  cache: CacheFolder | undefined,
  kept?: PassedReleases,
): Promise<{ readonly warnings: readonly Diagnostic[]; readonly write?: Promise<void> }> {
  const { app } = session;
  const keys = releaseCheckKeys(app.releases, app.policySet, new Map([...appInputs, ...chartInputs(app)]), session.strictValues);
  const passed = kept?.passed ?? (cache ? await readPassed(cache) : new Map<string, readonly Diagnostic[]>());
  if (kept) kept.passed = passed;
  const due = app.releases.filter((r) => !passed.has(keys.get(r) ?? ''));
  const fresh = due.length === 0 ? new Map<string, Diagnostic[]>() : await session.checkReleases(due);
  const now = new Map(app.releases.map((r) => [keys.get(r) ?? '', fresh.get(r.name) ?? passed.get(keys.get(r) ?? '') ?? []]));
  const warnings = [...now.values()].flat();
  if (due.length === 0) return { warnings };
  if (kept) kept.passed = now;
  if (!cache) return { warnings };
  const entries = [...now].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const write = cache.write(CACHE_FILE, 'values-check', FORMAT, JSON.stringify({ passed: entries }));
  write.catch(() => undefined); // the caller awaits it, unless the build fails first
  return { warnings, write };
}
