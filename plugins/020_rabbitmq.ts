/** rabbitmq: the administrator's password (shared with every service's rabbit-init Job) and the cluster's Erlang cookie. */
import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';
import { SHARED } from './lib/openstack.js';

export default class RabbitmqPlugin extends ChartPlugin {
  readonly chart = 'rabbitmq';

  override async getOverrides(ctx: ChartContext): Promise<Values> {
    return {
      endpoints: {
        oslo_messaging: {
          auth: {
            admin: { password: await this.password(ctx, SHARED.rabbitmqAdmin) },
            erlang_cookie: { value: await this.password(ctx, 'rabbitmq-erlang-cookie', { length: 48 }) },
          },
        },
      },
    };
  }
}
