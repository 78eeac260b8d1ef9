import { describe, expect, it } from 'vitest';
import { MemoryRecordStore, testChartContext, type ChartContext, type ClusterObjects, type JsonValue, type ObjectSelector } from 'flotilla/plugin';
import MariadbPlugin, { DELETE_DATA_RECORD } from '../../plugins/010_mariadb.js';

/** A cluster context with one data volume of the mariadb release; `deleted` collects what the plugin deleted. */
function cluster(records: Record<string, JsonValue>): { ctx: ChartContext; deleted: ObjectSelector[]; log: { level: string; message: string }[] } {
  const deleted: ObjectSelector[] = [];
  const matching = (selector: ObjectSelector) =>
    selector.kind === 'PersistentVolumeClaim' && selector.labelSelector.includes('app.kubernetes.io/instance=osh-openstack-mariadb')
      ? ['data-mariadb-server-0']
      : [];
  const kube: ClusterObjects = {
    namespace: 'openstack',
    list: async (selector) => matching(selector),
    deleteAll: async (selector) => {
      deleted.push(selector);
      return matching(selector);
    },
  };
  const offline = testChartContext('mariadb');
  return { ctx: { ...offline, records: new MemoryRecordStore(records), mode: 'cluster', kube }, deleted, log: offline.log.lines };
}

describe('plugin 010_mariadb', () => {
  it('sets the shared root password', async () => {
    expect(await new MariadbPlugin().getOverrides(testChartContext('mariadb'))).toEqual({
      endpoints: { oslo_db: { auth: { admin: { password: 'test-password-mariadb-root' } } } },
    });
  });

  it('keeps the data volumes on remove, and says so', async () => {
    const { ctx, deleted, log } = cluster({});
    await new MariadbPlugin().postRemove(ctx);
    expect(deleted).toEqual([]);
    expect(log).toEqual([
      { level: 'warn', message: `kept 1 data volume(s): data-mariadb-server-0; record ${DELETE_DATA_RECORD}: true to delete them on remove` },
    ]);
  });

  it('deletes them when asked', async () => {
    const { ctx, deleted } = cluster({ [DELETE_DATA_RECORD]: true });
    await new MariadbPlugin().postRemove(ctx);
    expect(deleted).toEqual([
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: 'openstack',
        labelSelector: 'app.kubernetes.io/instance=osh-openstack-mariadb,app.kubernetes.io/component=server',
      },
    ]);
  });

  it('only reports offline', async () => {
    const ctx = testChartContext('mariadb', { records: { [DELETE_DATA_RECORD]: true } });
    await new MariadbPlugin().postRemove(ctx);
    expect(ctx.log.lines.map((l) => l.message)).toEqual([
      'would delete the data volumes (app.kubernetes.io/instance=osh-openstack-mariadb,app.kubernetes.io/component=server)',
    ]);
  });
});
