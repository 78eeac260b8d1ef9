/**
 * Apply plans: which releases an apply touches in a mode, which it leaves
 * alone, and which deployed releases are gone and must be cleaned up after.
 * Always computed from the original release set, never from the last plan.
 */
import { NORMAL_MODE, type PluginHost, type ReleaseRef } from '../plugins/index.js';
import { LifecycleError } from './errors.js';

export interface ApplyPlan {
  readonly mode: string;
  /** Releases applied, in release-table order. */
  readonly releases: readonly ReleaseRef[];
  /** Releases of the original set this mode leaves as they are. */
  readonly skipped: readonly ReleaseRef[];
  /** Deployed releases no longer wanted: delete them after the apply succeeds. Never set in a partial mode. */
  readonly removed: readonly string[];
  readonly partial: boolean;
}

export class UnknownApplyModeError extends LifecycleError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

export interface PlanOptions {
  readonly mode?: string;
  /** Names of the releases deployed now (from the cluster), for the removal list. */
  readonly deployed?: readonly string[];
}

/** The mode is one the app knows (`normal` or one of its kustomize operator's): checked before any hook runs. */
export function requireApplyMode(host: Pick<PluginHost, 'kustomizeOperator'>, mode: string = NORMAL_MODE): void {
  const modes = [NORMAL_MODE, ...(host.kustomizeOperator?.modes ?? [])];
  if (!modes.includes(mode)) throw new UnknownApplyModeError(`unknown apply mode "${mode}"; this app knows: ${modes.join(', ')}`);
}

export async function planApply(host: Pick<PluginHost, 'enabled' | 'kustomizeOperator'>, options: PlanOptions = {}): Promise<ApplyPlan> {
  const operator = host.kustomizeOperator;
  const mode = options.mode ?? NORMAL_MODE;
  requireApplyMode(host, mode);
  const releases: ReleaseRef[] = [];
  const skipped: ReleaseRef[] = [];
  for (const release of host.enabled) {
    const enabled = operator ? await operator.isEnabled(release, mode) : true;
    (enabled ? releases : skipped).push(release);
  }
  const partial = operator ? operator.isPartial(mode) : false;
  if (!partial) {
    const kept = new Set(releases.map((r) => r.name));
    for (const release of releases) {
      const missing = release.dependsOn.filter((d) => !kept.has(d));
      if (missing.length > 0) {
        throw new LifecycleError(
          `apply mode "${mode}": release ${release.name} depends on ${missing.join(', ')}, which the kustomize operator (${operator?.file}) leaves out`,
        );
      }
    }
  }
  const wanted = new Set(releases.map((r) => r.name));
  const removed = partial ? [] : (options.deployed ?? []).filter((name) => !wanted.has(name));
  return { mode, releases, skipped, removed: [...removed].sort(), partial };
}

/**
 * The top-level kustomization `resources` for a plan, from the ORIGINAL
 * list: entries that are not release folders (`base`) stay, release folders
 * stay only when their release is applied. The original is not changed.
 */
export function kustomizationResources(original: readonly string[], releaseNames: readonly string[], plan: Pick<ApplyPlan, 'releases'>): string[] {
  const folder = (entry: string) => entry.replace(/^\.\//, '').replace(/\/+$/, '');
  const releaseFolders = new Set(releaseNames);
  const applied = new Set(plan.releases.map((r) => r.name));
  return original.filter((entry) => !releaseFolders.has(folder(entry)) || applied.has(folder(entry)));
}
