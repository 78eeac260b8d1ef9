/**
 * cinder: one cinder-volume image per backend of features.cinder.backends —
 * the release's (or a custom) `cinder_volume_<backend>` image when there is
 * one, else the default `cinder_volume` — pinned per backend, so changing
 * the default later is a visible change to every backend; plus accounts and
 * endpoints.
 */
import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';
import { credentials, endpointValues, merge } from './lib/openstack.js';

/** The chart's per-backend key: the backend name with `-` as `_`. */
export function backendKey(name: string): string {
  return name.replace(/-/g, '_');
}

export default class CinderPlugin extends ChartPlugin {
  readonly chart = 'cinder';

  override async getOverrides(ctx: ChartContext): Promise<Values> {
    const backends = Object.keys((ctx.spec.features.cinder as { backends?: Record<string, unknown> } | undefined)?.backends ?? {}).sort();
    const tags: Record<string, string> = {};
    for (const name of backends) {
      const own = `cinder_volume_${backendKey(name)}`;
      const image = this.image(ctx, own, 'cinder_volume');
      if (!image) throw new Error(`no image for cinder backend ${name}: the release ${ctx.version.release} defines neither ${own} nor cinder_volume`);
      tags[own] = image;
      ctx.log.debug(`backend ${name}: ${image}${this.image(ctx, own) ? '' : ' (default cinder_volume)'}`);
    }
    return merge(
      backends.length > 0 ? { images: { tags } } : {},
      await credentials(ctx, 'cinder', { identity: true, databases: ['oslo_db'], messaging: true }),
      endpointValues(ctx, ['identity', 'image', 'volumev3']),
    );
  }
}
