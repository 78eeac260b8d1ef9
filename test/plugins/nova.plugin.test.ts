import type { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { testChartContext, type ChartContext } from 'flotilla/plugin';
import NovaPlugin, { INSTANCES_RECORD } from '../../plugins/070_nova.js';

/** A cluster context whose CoreV1Api answers ConfigMap reads from `configMaps`. */
function clusterContext(configMaps: Record<string, Record<string, string>>): ChartContext {
  const core = {
    readNamespacedConfigMap: async ({ name, namespace }: { name: string; namespace: string }) => {
      const data = configMaps[`${namespace}/${name}`];
      if (!data) throw Object.assign(new Error('HTTP-Code: 404'), { code: 404 });
      return { data };
    },
  } as unknown as CoreV1Api;
  const { records: _records, ...offline } = testChartContext('nova');
  return { ...offline, mode: 'cluster', kube: { config: new KubeConfig(), core, namespace: 'openstack' } };
}

describe('plugin 070_nova', () => {
  it('refuses to remove nova while compute instances are recorded (offline: the local records)', async () => {
    const ctx = testChartContext('nova', { records: { [INSTANCES_RECORD]: ['vm-1', 'vm-2'] } });
    expect(await new NovaPlugin().check('remove', ctx)).toEqual({
      refused: true,
      reason: '2 compute instance(s) still exist (vm-1, vm-2); delete or migrate them first — removing nova would orphan them',
    });
    expect(await new NovaPlugin().check('apply', ctx)).toBeUndefined();
    expect(await new NovaPlugin().check('remove', testChartContext('nova', { records: { [INSTANCES_RECORD]: [] } }))).toBeUndefined();
    expect(await new NovaPlugin().check('remove', testChartContext('nova'))).toBeUndefined();
  });

  it('reads the record from the <app>-records ConfigMap in a cluster', async () => {
    const names = Array.from({ length: 7 }, (_, i) => `vm-${i}`);
    const refused = await new NovaPlugin().check('remove', clusterContext({ 'openstack/test-app-records': { [INSTANCES_RECORD]: JSON.stringify(names) } }));
    expect(refused).toMatchObject({ reason: expect.stringMatching(/^7 compute instance\(s\) still exist \(vm-0, vm-1, vm-2, vm-3, vm-4, … \(2 more\)\)/) });
    expect(await new NovaPlugin().check('remove', clusterContext({}))).toBeUndefined();
  });

  it('shares the metadata proxy secret with neutron and keeps one database account for its three databases', async () => {
    const values = (await new NovaPlugin().getOverrides(testChartContext('nova'))) as { endpoints: Record<string, { auth?: unknown; public?: unknown }> };
    expect(values.endpoints.compute_metadata?.auth).toEqual({ shared_secret: { password: 'test-password-nova-metadata-proxy' } });
    for (const db of ['oslo_db', 'oslo_db_api', 'oslo_db_cell0']) {
      expect(values.endpoints[db]?.auth).toEqual({ admin: { password: 'test-password-mariadb-root' }, nova: { password: 'test-password-nova-db' } });
    }
    // placement, image and network are only reached inside the cluster: nova's chart has no public side for them.
    expect(values.endpoints.placement?.public).toBeUndefined();
    expect(values.endpoints.compute?.public).toMatchObject({ host: 'nova.cloud.example.com' });
  });
});
