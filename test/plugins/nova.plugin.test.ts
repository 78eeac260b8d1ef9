import { describe, expect, it } from 'vitest';
import { MemoryRecordStore, testChartContext, type ChartContext, type JsonValue } from 'flotilla/plugin';
import NovaPlugin, { INSTANCES_RECORD } from '../../plugins/070_nova.js';

/** A cluster-mode context whose records (the `<app>-records` ConfigMap in a real cluster) hold `records`. */
function clusterContext(records: Record<string, JsonValue>): ChartContext {
  const offline = testChartContext('nova');
  return {
    ...offline,
    records: new MemoryRecordStore(records),
    mode: 'cluster',
    kube: { namespace: 'openstack', list: async () => [], deleteAll: async () => [] },
  };
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

  it('reads the same record in a cluster', async () => {
    const names = Array.from({ length: 7 }, (_, i) => `vm-${i}`);
    const refused = await new NovaPlugin().check('remove', clusterContext({ [INSTANCES_RECORD]: names }));
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
