/**
 * mariadb: the root password every service's db-init Job uses (generated
 * once, shared), and its data on remove: the StatefulSet's volumes are kept
 * (Helm leaves them) unless the operator recorded `mariadb.deleteDataOnRemove`
 * as true, in which case they are deleted after the release is gone.
 */
import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';
import { SHARED } from './lib/openstack.js';

export const DELETE_DATA_RECORD = 'mariadb.deleteDataOnRemove';

export default class MariadbPlugin extends ChartPlugin {
  readonly chart = 'mariadb';

  override async getOverrides(ctx: ChartContext): Promise<Values> {
    return { endpoints: { oslo_db: { auth: { admin: { password: await this.password(ctx, SHARED.mariadbRoot) } } } } };
  }

  override async postRemove(ctx: ChartContext): Promise<void> {
    const selector = `app.kubernetes.io/instance=${ctx.release.releaseName},app.kubernetes.io/component=server`;
    const deleteData = (await ctx.records.get(DELETE_DATA_RECORD)) === true;
    if (ctx.mode === 'offline') {
      ctx.log.info(deleteData ? `would delete the data volumes (${selector})` : `data volumes kept (${selector})`);
      return;
    }
    const claims = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: ctx.release.namespace, labelSelector: selector };
    if (!deleteData) {
      const kept = await ctx.kube.list(claims);
      if (kept.length > 0) ctx.log.warn(`kept ${kept.length} data volume(s): ${kept.join(', ')}; record ${DELETE_DATA_RECORD}: true to delete them on remove`);
      return;
    }
    const deleted = await ctx.kube.deleteAll(claims);
    ctx.log.warn(`deleted ${deleted.length} data volume(s) as recorded (${DELETE_DATA_RECORD}): ${deleted.join(', ') || 'none'}`);
  }
}
