/** placement: its keystone user and database account, and endpoints. */
import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';
import { credentials, endpointValues, merge } from './lib/openstack.js';

export default class PlacementPlugin extends ChartPlugin {
  readonly chart = 'placement';

  override async getOverrides(ctx: ChartContext): Promise<Values> {
    return merge(await credentials(ctx, 'placement', { identity: true, databases: ['oslo_db'] }), endpointValues(ctx, ['identity', 'placement']));
  }
}
