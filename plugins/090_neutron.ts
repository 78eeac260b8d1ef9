/**
 * neutron: tenant networks over the tunnel type features.neutron chooses
 * (Geneve by default, VXLAN when asked — OVN's own encapsulation must match,
 * see 080_ovn.ts), the metadata proxy secret shared with nova, accounts and
 * endpoints.
 */
import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';
import { credentials, endpointValues, merge, SHARED } from './lib/openstack.js';
import { encapType } from './lib/networking.js';

export default class NeutronPlugin extends ChartPlugin {
  readonly chart = 'neutron';

  override async getOverrides(ctx: ChartContext): Promise<Values> {
    const encap = encapType(ctx);
    const tunnel: Values =
      encap === 'vxlan'
        ? { ml2: { type_drivers: ['vxlan', 'vlan', 'flat'], tenant_network_types: ['vxlan'] }, ml2_type_vxlan: { vni_ranges: '1:16777215' } }
        : // OVN's Geneve header carries 38 bytes of options at most.
          {
            ml2: { type_drivers: ['geneve', 'vlan', 'flat'], tenant_network_types: ['geneve'] },
            ml2_type_geneve: { vni_ranges: '1:65536', max_header_size: 38 },
          };
    return merge(
      { conf: { plugins: { ml2_conf: tunnel } } },
      await credentials(ctx, 'neutron', { identity: true, databases: ['oslo_db'], messaging: true }),
      { endpoints: { compute_metadata: { auth: { shared_secret: { password: await this.password(ctx, SHARED.metadataSecret) } } } } },
      endpointValues(ctx, ['identity', 'network']),
    );
  }
}
