/**
 * When each HelmRelease of an apply is written, and how long it may take.
 *
 * Order: a release is written only once every release of the apply it
 * depends on is Ready for this apply. helm-controller holds a dependant
 * until its dependency is Ready at its current generation, which covers a
 * spec change written first; but new values in an overrides Secret or a
 * reconcile request move no generation, so a dependant written at once
 * would upgrade against a dependency that has not upgraded yet. Written
 * after, it also starts at once instead of at Flux's next dependency
 * requeue (`--requeue-dependency`, 30 s).
 *
 * Time: a release is given its Helm timeout for each attempt its
 * remediation allows, plus Flux's overheads (the source fetch and a
 * dependency requeue); the operation's default bound is the longest chain
 * of those through dependsOn — the critical path.
 */
import { fluxDurationMs, FLUX_DEFAULT_TIMEOUT } from '../names/index.js';
import type { HelmReleaseSpec } from '../flux/index.js';

/** Flux's overheads per release: a dependency requeue (helm-controller's default `--requeue-dependency`) and a chart fetch. */
export const DEPENDENCY_REQUEUE_MS = 30_000;
export const SOURCE_FETCH_MS = 30_000;

/** What the schedule reads of a release: its key, what it depends on (keys), and its spec's timeouts and remediation. */
export interface ScheduledRelease<T> {
  readonly key: string;
  readonly dependsOn: readonly string[];
  readonly spec: Pick<HelmReleaseSpec, 'timeout' | 'install' | 'upgrade'>;
  readonly object: T;
}

/**
 * The time a release may take: per attempt its Helm timeout (the action's,
 * else the release's, else Flux's 5m), times the attempts its remediation
 * allows (one when retries are unlimited: Flux never gives up, the
 * operation's bound decides), plus Flux's overheads.
 */
export function releaseTimeMs(spec: ScheduledRelease<unknown>['spec'], action: 'install' | 'upgrade' = 'upgrade'): number {
  const own = spec[action];
  const timeout = fluxDurationMs(String(own?.timeout ?? spec.timeout ?? FLUX_DEFAULT_TIMEOUT)) ?? (fluxDurationMs(FLUX_DEFAULT_TIMEOUT) as number);
  const retries = own?.remediation?.retries ?? 0;
  const attempts = retries >= 0 ? retries + 1 : 1;
  return timeout * attempts + SOURCE_FETCH_MS + DEPENDENCY_REQUEUE_MS;
}

/** The longest chain of release times through dependsOn (dependencies outside the set count nothing). */
export function criticalPathMs(releases: readonly ScheduledRelease<unknown>[]): number {
  const byKey = new Map(releases.map((r) => [r.key, r]));
  const memo = new Map<string, number>();
  const finish = (release: ScheduledRelease<unknown>, seen: ReadonlySet<string>): number => {
    const known = memo.get(release.key);
    if (known !== undefined) return known;
    let start = 0;
    for (const dep of release.dependsOn) {
      const other = byKey.get(dep);
      // A cycle is refused when the app is built; here it only must not loop.
      if (other && !seen.has(dep)) start = Math.max(start, finish(other, new Set([...seen, dep])));
    }
    const end = start + releaseTimeMs(release.spec);
    memo.set(release.key, end);
    return end;
  };
  return releases.reduce((longest, r) => Math.max(longest, finish(r, new Set([r.key]))), 0);
}

/**
 * Which releases may be written now: those whose dependencies in the set
 * are all Ready, most urgent first. Urgent is the longest chain of
 * dependants still ahead (counted in releases: Helm timeouts are bounds,
 * not durations), then the most dependants, then the key. The API server
 * and helm-controller's work queue take writes roughly in the order they
 * come, so a release on the critical path written last of its wave starts
 * last.
 */
export class WriteSchedule<T> {
  private readonly waiting: Map<string, ScheduledRelease<T>>;
  private readonly ready = new Set<string>();
  private readonly inSet: ReadonlySet<string>;
  private readonly urgency: ReadonlyMap<string, { readonly chain: number; readonly dependants: number }>;

  constructor(releases: readonly ScheduledRelease<T>[]) {
    this.waiting = new Map(releases.map((r) => [r.key, r]));
    this.inSet = new Set(releases.map((r) => r.key));
    this.urgency = urgencyOf(releases);
  }

  /** The releases written first: no dependency in the set. */
  first(): ScheduledRelease<T>[] {
    return this.take();
  }

  /** `key` is Ready for this apply: the releases that were waiting only on it and others Ready. */
  markReady(key: string): ScheduledRelease<T>[] {
    this.ready.add(key);
    return this.take();
  }

  private take(): ScheduledRelease<T>[] {
    const now = [...this.waiting.values()].filter((r) => r.dependsOn.every((dep) => !this.inSet.has(dep) || this.ready.has(dep)));
    for (const r of now) this.waiting.delete(r.key);
    return now.sort(this.byUrgency);
  }

  /** Orders releases, the most urgent first. */
  readonly byUrgency = (a: ScheduledRelease<T>, b: ScheduledRelease<T>): number => {
    const [ua, ub] = [this.urgency.get(a.key), this.urgency.get(b.key)];
    return (ub?.chain ?? 0) - (ua?.chain ?? 0) || (ub?.dependants ?? 0) - (ua?.dependants ?? 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  };

  /** Wave by wave, each after every release it depends on: for a run that does not wait (--no-wait). */
  static waves<T>(releases: readonly ScheduledRelease<T>[]): ScheduledRelease<T>[][] {
    const schedule = new WriteSchedule(releases);
    const waves: ScheduledRelease<T>[][] = [];
    for (let wave = schedule.first(); wave.length > 0; wave = wave.flatMap((r) => schedule.markReady(r.key)).sort(schedule.byUrgency)) waves.push(wave);
    // Whatever a cycle left waiting goes last.
    if (schedule.waiting.size > 0) waves.push([...schedule.waiting.values()].sort(schedule.byUrgency));
    return waves;
  }
}

/** Per release: the most releases on a chain of dependants starting with it, and how many releases depend on it at all. */
function urgencyOf(releases: readonly ScheduledRelease<unknown>[]): Map<string, { chain: number; dependants: number }> {
  const dependantsOf = new Map<string, string[]>(releases.map((r) => [r.key, []]));
  for (const r of releases) for (const dep of r.dependsOn) dependantsOf.get(dep)?.push(r.key);
  const chain = new Map<string, number>();
  const chainOf = (key: string, seen: ReadonlySet<string>): number => {
    const known = chain.get(key);
    if (known !== undefined) return known;
    // A cycle is refused when the app is built; here it only must not loop.
    const length = 1 + Math.max(0, ...(dependantsOf.get(key) ?? []).filter((d) => !seen.has(d)).map((d) => chainOf(d, new Set([...seen, d]))));
    chain.set(key, length);
    return length;
  };
  const allDependants = (key: string): Set<string> => {
    const found = new Set<string>();
    const stack = [...(dependantsOf.get(key) ?? [])];
    for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
      if (found.has(next)) continue;
      found.add(next);
      stack.push(...(dependantsOf.get(next) ?? []));
    }
    return found;
  };
  return new Map(releases.map((r) => [r.key, { chain: chainOf(r.key, new Set([r.key])), dependants: allDependants(r.key).size }]));
}
