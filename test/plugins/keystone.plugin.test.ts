import { describe, expect, it } from 'vitest';
import { testChartContext, type ReleaseRef } from 'flotilla/plugin';
import KeystonePlugin from '../../plugins/030_keystone.js';

const release = (name: string, service: string): ReleaseRef => ({
  name,
  chart: name,
  namespace: 'openstack',
  releaseName: `osh-openstack-${name}`,
  service,
  dependsOn: [],
});

describe('plugin 030_keystone', () => {
  it('sets the admin credentials and the endpoints of every enabled service', async () => {
    const ctx = testChartContext('keystone', {
      releases: [release('mariadb', 'database'), release('keystone', 'identity'), release('glance', 'image'), release('nova', 'compute')],
    });
    const values = (await new KeystonePlugin().getOverrides(ctx)) as { endpoints: Record<string, { auth?: unknown; public?: { host: string } }> };
    expect(values.endpoints.identity?.auth).toEqual({ admin: { password: 'test-password-keystone-admin' } });
    expect(
      Object.keys(values.endpoints)
        .filter((t) => values.endpoints[t]?.public)
        .sort(),
    ).toEqual(['compute', 'compute_novnc_proxy', 'identity', 'image']);
    expect(values.endpoints.image?.public?.host).toBe('glance.cloud.example.com');
  });
});
