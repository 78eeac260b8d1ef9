/**
 * glance: how glance-api is served, from the target release's
 * serviceDefaults.glanceWsgi — uWSGI running the WSGI application (wsgi), or
 * the eventlet server behind an nginx proxy (proxy) for releases where the
 * WSGI path is not ready — plus its accounts and endpoints.
 */
import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';
import { credentials, endpointValues, merge } from './lib/openstack.js';

export type GlanceApiMode = 'wsgi' | 'proxy';

/**
 * The model the target's glanceWsgi says — the value the HelmRelease's
 * glance.openstack.org/wsgi annotation carries; a release that does not say
 * gets the fallback of overrides/service-defaults.yaml (false) before it
 * gets here, and an app without that declaration keeps the eventlet server,
 * the model every release supports.
 */
export function apiMode(serviceDefaults: Readonly<Record<string, unknown>>): GlanceApiMode {
  return serviceDefaults.glanceWsgi === true ? 'wsgi' : 'proxy';
}

export default class GlancePlugin extends ChartPlugin {
  readonly chart = 'glance';

  override async getOverrides(ctx: ChartContext): Promise<Values> {
    const mode = apiMode(ctx.version.serviceDefaults);
    ctx.log.debug(`OpenStack ${ctx.version.release}: glance-api in ${mode} mode`);
    return merge(
      { api: { mode } },
      await credentials(ctx, 'glance', { identity: true, databases: ['oslo_db'], messaging: true }),
      endpointValues(ctx, ['identity', 'image']),
    );
  }
}
