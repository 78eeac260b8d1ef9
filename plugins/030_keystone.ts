/**
 * keystone: the cloud administrator's credentials (a generated password,
 * shared with every chart that acts as admin), its own database and
 * messaging accounts, and the endpoints of every enabled service: the
 * catalog, as the other charts register it, in one place.
 */
import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';
import { credentials, endpointValues, merge, SERVICE_ENDPOINTS } from './lib/openstack.js';

export default class KeystonePlugin extends ChartPlugin {
  readonly chart = 'keystone';

  override async getOverrides(ctx: ChartContext): Promise<Values> {
    const services = new Set(ctx.releases.map((r) => r.service).filter((s): s is string => s !== undefined));
    const types = ['identity', ...[...services].sort().flatMap((s) => (s === 'identity' ? [] : (SERVICE_ENDPOINTS[s] ?? [])))];
    return merge(await credentials(ctx, 'keystone', { databases: ['oslo_db'], messaging: true }), endpointValues(ctx, types));
  }
}
