import type { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { testChartContext, type ChartContext, type JsonValue } from 'flotilla/plugin';
import MariadbPlugin, { DELETE_DATA_RECORD } from '../../plugins/010_mariadb.js';

function cluster(records: Record<string, JsonValue>): { ctx: ChartContext; deleted: string[]; log: { level: string; message: string }[] } {
  const deleted: string[] = [];
  const core = {
    readNamespacedConfigMap: async () => ({ data: Object.fromEntries(Object.entries(records).map(([k, v]) => [k, JSON.stringify(v)])) }),
    listNamespacedPersistentVolumeClaim: async ({ labelSelector }: { labelSelector: string }) => ({
      items: labelSelector.includes('app.kubernetes.io/instance=osh-openstack-mariadb') ? [{ metadata: { name: 'data-mariadb-server-0' } }] : [],
    }),
    deleteCollectionNamespacedPersistentVolumeClaim: async ({ labelSelector }: { labelSelector: string }) => {
      deleted.push(labelSelector);
      return {};
    },
  } as unknown as CoreV1Api;
  const { records: _records, ...offline } = testChartContext('mariadb');
  return { ctx: { ...offline, mode: 'cluster', kube: { config: new KubeConfig(), core, namespace: 'openstack' } }, deleted, log: offline.log.lines };
}

describe('plugin 010_mariadb', () => {
  it('sets the shared root password', async () => {
    expect(await new MariadbPlugin().getOverrides(testChartContext('mariadb'))).toEqual({ endpoints: { oslo_db: { auth: { admin: { password: 'test-password-mariadb-root' } } } } });
  });

  it('keeps the data volumes on remove, and says so', async () => {
    const { ctx, deleted, log } = cluster({});
    await new MariadbPlugin().postRemove(ctx);
    expect(deleted).toEqual([]);
    expect(log).toEqual([{ level: 'warn', message: `kept 1 data volume(s): data-mariadb-server-0; record ${DELETE_DATA_RECORD}: true to delete them on remove` }]);
  });

  it('deletes them when asked', async () => {
    const { ctx, deleted } = cluster({ [DELETE_DATA_RECORD]: true });
    await new MariadbPlugin().postRemove(ctx);
    expect(deleted).toEqual(['app.kubernetes.io/instance=osh-openstack-mariadb,app.kubernetes.io/component=server']);
  });

  it('only reports offline', async () => {
    const ctx = testChartContext('mariadb', { records: { [DELETE_DATA_RECORD]: true } });
    await new MariadbPlugin().postRemove(ctx);
    expect(ctx.log.lines.map((l) => l.message)).toEqual(['would delete the data volumes (app.kubernetes.io/instance=osh-openstack-mariadb,app.kubernetes.io/component=server)']);
  });
});
