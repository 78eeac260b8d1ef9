/** horizon: Django's SECRET_KEY (the same on every replica, generated once), its database account, endpoints. */
import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';
import { credentials, endpointValues, merge } from './lib/openstack.js';

export default class HorizonPlugin extends ChartPlugin {
  readonly chart = 'horizon';

  override async getOverrides(ctx: ChartContext): Promise<Values> {
    return merge(
      { endpoints: { dashboard: { auth: { secret_key: { value: await this.password(ctx, 'horizon-secret-key', { length: 64 }) } } } } },
      await credentials(ctx, 'horizon', { databases: ['oslo_db'], keystoneAdmin: false }),
      endpointValues(ctx, ['identity', 'dashboard']),
    );
  }
}
