/**
 * mariadb: the root password every service's db-init Job uses (generated
 * once, shared), and its data on remove: the StatefulSet's volumes are kept
 * (Helm leaves them) unless the operator recorded `mariadb.deleteDataOnRemove`
 * as true, in which case they are deleted after the release is gone.
 */
import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';
import { SHARED } from './lib/openstack.js';
import { readRecord } from './lib/records.js';

export const DELETE_DATA_RECORD = 'mariadb.deleteDataOnRemove';

export default class MariadbPlugin extends ChartPlugin {
  readonly chart = 'mariadb';

  override async getOverrides(ctx: ChartContext): Promise<Values> {
    return { endpoints: { oslo_db: { auth: { admin: { password: await this.password(ctx, SHARED.mariadbRoot) } } } } };
  }

  override async postRemove(ctx: ChartContext): Promise<void> {
    const selector = `app.kubernetes.io/instance=${ctx.release.releaseName},app.kubernetes.io/component=server`;
    const deleteData = (await readRecord(ctx, DELETE_DATA_RECORD)) === true;
    if (ctx.mode === 'offline') {
      ctx.log.info(deleteData ? `would delete the data volumes (${selector})` : `data volumes kept (${selector})`);
      return;
    }
    const { core, namespace } = { core: ctx.kube.core, namespace: ctx.release.namespace };
    const claims = (await core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector: selector })).items.map((c) => c.metadata?.name ?? '?');
    if (!deleteData) {
      if (claims.length > 0) ctx.log.warn(`kept ${claims.length} data volume(s): ${claims.join(', ')}; record ${DELETE_DATA_RECORD}: true to delete them on remove`);
      return;
    }
    await core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace, labelSelector: selector });
    ctx.log.warn(`deleted ${claims.length} data volume(s) as recorded (${DELETE_DATA_RECORD}): ${claims.join(', ') || 'none'}`);
  }
}
