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
import type { Session } from '../session/index.js';
import { releaseLayerFiles } from '../values/index.js';

const FORMAT = 'flotilla-values-check/3';
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

/** The key of each release: what it passed with, if it did. */
export function releaseCheckKeys(releases: readonly Release[], policySet: string | undefined, inputs: ValuesInputs): Map<Release, string> {
  const own = new Map(releases.map((r) => [r, ownInputs(r, policySet)]));
  const owned = new Set([...own.values()].flat());
  const shared = digest([...inputs.keys()].filter((name) => !owned.has(name)), inputs, 'app');
  return new Map(releases.map((r) => [r, digest(own.get(r) ?? [], inputs, `${shared}\0${r.name}`)]));
}

/** Keys that passed before; a missing, torn or unvouched entry counts as none (the check then runs, nothing is trusted). */
async function readPassed(cache: CacheFolder): Promise<Set<string>> {
  try {
    const content = await cache.read(CACHE_FILE, 'values-check', FORMAT);
    const entry = content && (JSON.parse(content.toString('utf8')) as { passed?: unknown } | null);
    if (!entry || !Array.isArray(entry.passed)) return new Set();
    return new Set(entry.passed.filter((k): k is string => typeof k === 'string' && /^[0-9a-f]{64}$/.test(k)));
  } catch {
    return new Set();
  }
}

/** The keys of releases that passed, as a long-lived build keeps them between builds (see WatchMemory). */
export interface PassedReleases {
  passed?: ReadonlySet<string>;
}

/**
 * Checks the releases whose inputs changed since they last passed; throws as
 * `Session.checkAll` does. `appInputs`: the app's files as shipped and the
 * plugin bundle; the charts' files are read here. Resolves to the write of
 * what passed into the cache, for the caller to await when it likes (none
 * when nothing new passed); `kept` holds the same in memory.
 */
export async function checkValuesOnce(session: Session, appInputs: ValuesInputs, cache: CacheFolder | undefined, kept?: PassedReleases): Promise<Promise<void> | undefined> {
  const { app } = session;
  const keys = releaseCheckKeys(app.releases, app.policySet, new Map([...appInputs, ...chartInputs(app)]));
  const passed = kept?.passed ?? (cache ? await readPassed(cache) : new Set<string>());
  if (kept) kept.passed = passed;
  const due = app.releases.filter((r) => !passed.has(keys.get(r) ?? ''));
  if (due.length === 0) return undefined;
  await session.checkReleases(due);
  const nowPassed = [...new Set(keys.values())].sort();
  if (kept) kept.passed = new Set(nowPassed);
  if (!cache) return undefined;
  const write = cache.write(CACHE_FILE, 'values-check', FORMAT, JSON.stringify({ passed: nowPassed }));
  write.catch(() => undefined); // the caller awaits it, unless the build fails first
  return write;
}
