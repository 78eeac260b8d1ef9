/**
 * Facts recorded about the cloud that plugins act on (compute instances
 * still present, an operator's request to delete data on remove). Offline
 * they are flotilla's local records; in a cluster, keys of the ConfigMap
 * `<app>-records` in the app's namespace, each value JSON. Whoever knows the
 * fact (an operator, a monitoring job) writes it there.
 */
import type { JsonValue, PluginContext } from 'flotilla/plugin';

export function recordsConfigMap(ctx: PluginContext): string {
  return `${ctx.app.name}-records`;
}

export async function readRecord(ctx: PluginContext, key: string): Promise<JsonValue | undefined> {
  if (ctx.mode === 'offline') return ctx.records.get(key);
  let data: Record<string, string> | undefined;
  try {
    data = (await ctx.kube.core.readNamespacedConfigMap({ name: recordsConfigMap(ctx), namespace: ctx.kube.namespace })).data;
  } catch (error) {
    if ((error as { code?: unknown }).code === 404) return undefined;
    throw error;
  }
  const raw = data?.[key];
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as JsonValue;
  } catch {
    throw new Error(`ConfigMap ${ctx.kube.namespace}/${recordsConfigMap(ctx)} key ${key} is not JSON`);
  }
}
