/**
 * The base class of a kustomize operator: it decides which releases take part
 * in an apply, per apply mode. The host always hands it the original release
 * set (the spec's enabled releases), never the result of an earlier edit, so
 * switching modes back and forth cannot lose a release.
 */
import { PLUGIN_API_VERSION } from './brand.js';
import type { HookTimeouts, PluginContext, ReleaseRef } from './context.js';

export const NORMAL_MODE = 'normal';

export abstract class KustomizeOperator {
  readonly pluginKind = 'kustomize' as const;
  readonly apiVersion = PLUGIN_API_VERSION;
  readonly timeouts?: HookTimeouts;
  /** Apply modes besides `normal`; asking for any other is an error. */
  readonly modes: readonly string[] = [];

  /** Whether `release` is applied in `mode`. The default keeps every release. */
  isEnabled(_release: ReleaseRef, _mode: string, _ctx: PluginContext): boolean | Promise<boolean> {
    return true;
  }

  /**
   * A partial mode applies a subset and leaves the other releases as they are
   * deployed (a restore applying only the databases): nothing is queued for
   * removal. By default every mode but `normal` is partial.
   */
  isPartial(mode: string): boolean {
    return mode !== NORMAL_MODE;
  }
}
