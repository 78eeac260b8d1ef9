/**
 * App-wide checks of the OpenStack app. Before an apply or an update, the
 * spec must make sense as a whole: what one feature names, another must
 * provide. The schema checks each feature's shape; these check how they fit.
 */
import { AppLifecycle, refuse, type LifecycleContext, type LifecycleHooks, type Verdict } from 'flotilla/plugin';

interface CinderBackend {
  readonly type?: string;
  readonly shares?: readonly string[];
}

export default class OpenStackLifecycle extends AppLifecycle {
  override readonly hooks: LifecycleHooks = {
    apply: { pre: { check: (ctx) => this.checkStorage(ctx) } },
    update: { pre: { check: (ctx) => this.checkStorage(ctx) } },
  };

  /** The storage a feature names must exist in the spec. */
  checkStorage(ctx: LifecycleContext): Verdict {
    const features = ctx.spec.features;
    const backends = ((features.cinder as { backends?: Record<string, CinderBackend> } | undefined)?.backends ?? {}) as Record<string, CinderBackend>;
    const typeOf = (name: string) => backends[name]?.type ?? name;
    const glanceStorage = (features.glance as { storage?: string } | undefined)?.storage;
    if (glanceStorage === 'rbd' && !Object.keys(backends).some((name) => typeOf(name) === 'ceph')) {
      return refuse(
        'features.glance.storage is rbd, but features.cinder.backends has no ceph backend to take the Ceph client settings from; add one (ceph: {}) or use storage: file',
      );
    }
    for (const [name, backend] of Object.entries(backends)) {
      if (typeOf(name) === 'nfs' && (backend.shares ?? []).length === 0) {
        return refuse(`features.cinder.backends.${name} is an NFS backend without shares; list the exports (shares: [host:/path])`);
      }
    }
    ctx.log.debug(`storage: cinder backends ${Object.keys(backends).join(', ') || 'none'}, glance ${glanceStorage ?? 'default'}`);
  }
}
