/** clients: the admin credentials of the openstack CLI pod. */
import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';
import { credentials, endpointValues, merge } from './lib/openstack.js';

export default class ClientsPlugin extends ChartPlugin {
  readonly chart = 'clients';

  override async getOverrides(ctx: ChartContext): Promise<Values> {
    return merge(await credentials(ctx, 'admin', {}), endpointValues(ctx, ['identity']));
  }
}
