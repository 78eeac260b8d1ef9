/**
 * The base class of a chart plugin (one file `plugins/NNN_<name>.ts`, default
 * export). It is bound to one chart, and optionally to one release of it;
 * `getOverrides` is values layer 5 of that release, and the hooks run around
 * apply and remove.
 */
import { PLUGIN_API_VERSION } from './brand.js';
import type { ChartContext, HookTimeouts, Operation, PluginContext, Values } from './context.js';
import { imageFor, imageTags, serviceEndpoints, type EndpointOptions, type ServiceEndpoints } from './helpers.js';
import type { Verdict } from './verdict.js';

export abstract class ChartPlugin {
  readonly pluginKind = 'chart' as const;
  readonly apiVersion = PLUGIN_API_VERSION;
  /** The chart this plugin serves (Chart.yaml `name`). */
  abstract readonly chart: string;
  /** One release of the chart; unset, the plugin serves every release of the chart. */
  readonly release?: string;
  /** Time limits (ms) per hook name, over the host's defaults. */
  readonly timeouts?: HookTimeouts;

  /** Values layer 5 of the release: merged over the policy layer, under the spec's common and service values. */
  getOverrides(_ctx: ChartContext): Values | Promise<Values> {
    return {};
  }

  /** A check before any work of `operation`; return `refuse(reason)` to stop it. */
  check?(operation: Operation, ctx: ChartContext): Verdict | Promise<Verdict>;
  preApply?(ctx: ChartContext): void | Promise<void>;
  postApply?(ctx: ChartContext): void | Promise<void>;
  preRemove?(ctx: ChartContext): void | Promise<void>;
  postRemove?(ctx: ChartContext): void | Promise<void>;
  /** Runs once the release is Ready during an apply. */
  status?(ctx: ChartContext): void | Promise<void>;

  /** A password generated on first use and kept (cluster Secret, or the local store offline). Never log it. */
  protected password(ctx: PluginContext, name: string, options?: { readonly length?: number }): Promise<string> {
    return ctx.passwords.getOrGenerate(name, options);
  }

  protected endpoints(ctx: PluginContext, options: EndpointOptions): ServiceEndpoints {
    return serviceEndpoints(ctx, options);
  }

  protected image(ctx: PluginContext, ...fields: readonly string[]): string | undefined {
    return imageFor(ctx, ...fields);
  }

  protected imageTags(ctx: PluginContext, keys: Readonly<Record<string, string | readonly string[]>>): Values {
    return imageTags(ctx, keys);
  }
}
