/**
 * ovn: the tunnel settings of every chassis from features.neutron — the
 * interface whose address is the tunnel endpoint (the node's InternalIP when
 * unset) and the encapsulation, which neutron's tenant networks must match
 * (090_neutron.ts reads the same feature).
 */
import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';
import { encapType, neutronFeatures } from './lib/networking.js';

export default class OvnPlugin extends ChartPlugin {
  readonly chart = 'ovn';

  override getOverrides(ctx: ChartContext): Values {
    return { network: { interface: { tunnel: neutronFeatures(ctx).tunnelInterface ?? '' }, encap_type: encapType(ctx) } };
  }
}
