/**
 * nova: accounts (three databases: nova, nova_api, nova_cell0), the metadata
 * proxy secret shared with neutron, endpoints; and a check refusing to
 * remove the compute service while instances are recorded as present — the
 * record `nova.instances` (a list of instance names) is kept by whoever
 * tracks them (offline in flotilla's local records, in a cluster in the
 * ConfigMap `<app>-records`).
 */
import { ChartPlugin, refuse, type ChartContext, type Operation, type Values, type Verdict } from 'flotilla/plugin';
import { credentials, endpointValues, merge, SHARED } from './lib/openstack.js';

export const INSTANCES_RECORD = 'nova.instances';

export default class NovaPlugin extends ChartPlugin {
  readonly chart = 'nova';

  override async getOverrides(ctx: ChartContext): Promise<Values> {
    return merge(
      await credentials(ctx, 'nova', { identity: true, databases: ['oslo_db', 'oslo_db_api', 'oslo_db_cell0'], messaging: true }),
      { endpoints: { compute_metadata: { auth: { shared_secret: { password: await this.password(ctx, SHARED.metadataSecret) } } } } },
      endpointValues(ctx, ['identity', 'compute', 'compute_novnc_proxy'], ['placement', 'image', 'network']),
    );
  }

  override async check(operation: Operation, ctx: ChartContext): Promise<Verdict> {
    if (operation !== 'remove') return undefined;
    const recorded = await ctx.records.get(INSTANCES_RECORD);
    const instances = Array.isArray(recorded) ? recorded.map(String) : [];
    if (instances.length === 0) return undefined;
    const shown = instances.slice(0, 5).join(', ') + (instances.length > 5 ? `, … (${instances.length - 5} more)` : '');
    return refuse(`${instances.length} compute instance(s) still exist (${shown}); delete or migrate them first — removing nova would orphan them`);
  }
}
