import { describe, expect, it } from 'vitest';
import { testChartContext } from 'flotilla/plugin';
import OvnPlugin from '../../plugins/080_ovn.js';
import NeutronPlugin from '../../plugins/090_neutron.js';

const features = (neutron: Record<string, unknown>) => ({ spec: { features: { neutron } } });

describe('plugins 080_ovn and 090_neutron', () => {
  it('take the tunnel interface and encapsulation from features.neutron, Geneve by default', async () => {
    expect(new OvnPlugin().getOverrides(testChartContext('ovn', features({ backend: 'ovn', tunnelInterface: 'eth1' })))).toEqual({
      network: { interface: { tunnel: 'eth1' }, encap_type: 'geneve' },
    });
    expect(new OvnPlugin().getOverrides(testChartContext('ovn', features({ backend: 'ovn' })))).toEqual({
      network: { interface: { tunnel: '' }, encap_type: 'geneve' },
    });
    const geneve = await new NeutronPlugin().getOverrides(testChartContext('neutron', features({ backend: 'ovn' })));
    expect(geneve).toMatchObject({ conf: { plugins: { ml2_conf: { ml2: { tenant_network_types: ['geneve'] }, ml2_type_geneve: { max_header_size: 38 } } } } });
  });

  it('agree on VXLAN when the spec asks for it', async () => {
    const spec = features({ backend: 'ovn', encapType: 'vxlan' });
    expect(new OvnPlugin().getOverrides(testChartContext('ovn', spec))).toMatchObject({ network: { encap_type: 'vxlan' } });
    const neutron = await new NeutronPlugin().getOverrides(testChartContext('neutron', spec));
    expect(neutron).toMatchObject({ conf: { plugins: { ml2_conf: { ml2: { type_drivers: ['vxlan', 'vlan', 'flat'], tenant_network_types: ['vxlan'] } } } } });
    expect((neutron as { conf: { plugins: { ml2_conf: Record<string, unknown> } } }).conf.plugins.ml2_conf.ml2_type_geneve).toBeUndefined();
  });

  it('neutron shares the metadata proxy secret with nova', async () => {
    expect(await new NeutronPlugin().getOverrides(testChartContext('neutron', features({ backend: 'ovn' })))).toMatchObject({
      endpoints: { compute_metadata: { auth: { shared_secret: { password: 'test-password-nova-metadata-proxy' } } } },
    });
  });
});
