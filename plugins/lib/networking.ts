/** features.neutron as the networking plugins read it (the schema, overrides/features.schema.json, has the full shape). */
import type { PluginContext } from 'flotilla/plugin';

export interface NeutronFeatures {
  readonly backend?: string;
  readonly tunnelInterface?: string;
  readonly encapType?: 'geneve' | 'vxlan';
}

export function neutronFeatures(ctx: PluginContext): NeutronFeatures {
  return (ctx.spec.features.neutron ?? {}) as NeutronFeatures;
}

/** The tunnel encapsulation between chassis: Geneve (OVN's own) unless the spec says VXLAN. */
export function encapType(ctx: PluginContext): 'geneve' | 'vxlan' {
  return neutronFeatures(ctx).encapType ?? 'geneve';
}
