/**
 * What every OpenStack chart plugin of this app needs: the shared and
 * per-service passwords (generated once, kept by flotilla's password store)
 * in the `endpoints.*.auth` shape the charts read, and the service endpoints
 * (internal Service, public host under main.domain, HTTPS when features.tls
 * is on) in the `endpoints.<type>` shape.
 */
import { serviceEndpoints, type JsonValue, type PluginContext, type Values } from 'flotilla/plugin';

/** Passwords several charts must agree on: one name is one value app-wide. */
export const SHARED = {
  keystoneAdmin: 'keystone-admin',
  mariadbRoot: 'mariadb-root',
  rabbitmqAdmin: 'rabbitmq-admin',
  /** nova's metadata API and neutron's metadata agent sign requests with it. */
  metadataSecret: 'nova-metadata-proxy',
} as const;

interface CatalogEntry {
  /** First label of the public host: <name>.<main.domain>. */
  readonly name: string;
  /** The in-cluster Service. */
  readonly service: string;
  readonly port: number;
  readonly path: string;
}

/** The API endpoints of the app, by endpoint type (the charts' `endpoints.<type>`). */
export const CATALOG: Readonly<Record<string, CatalogEntry>> = {
  identity: { name: 'keystone', service: 'keystone-api', port: 5000, path: '/v3' },
  image: { name: 'glance', service: 'glance-api', port: 9292, path: '' },
  volumev3: { name: 'cinder', service: 'cinder-api', port: 8776, path: '/v3' },
  placement: { name: 'placement', service: 'placement-api', port: 8778, path: '/' },
  compute: { name: 'nova', service: 'nova-api', port: 8774, path: '/v2.1' },
  compute_novnc_proxy: { name: 'novncproxy', service: 'nova-novncproxy', port: 6080, path: '/vnc_lite.html' },
  network: { name: 'neutron', service: 'neutron-server', port: 9696, path: '' },
  dashboard: { name: 'horizon', service: 'horizon', port: 80, path: '/' },
};

/** Endpoint types each spec service (features.services) puts in the catalog. */
export const SERVICE_ENDPOINTS: Readonly<Record<string, readonly string[]>> = {
  identity: ['identity'],
  image: ['image'],
  'block-storage': ['volumev3'],
  placement: ['placement'],
  compute: ['compute', 'compute_novnc_proxy'],
  networking: ['network'],
  dashboard: ['dashboard'],
};

export function tlsEnabled(ctx: PluginContext): boolean {
  const tls = ctx.spec.features.tls as { enabled?: unknown } | undefined;
  return tls?.enabled === true;
}

/**
 * `{endpoints: {<type>: {internal, public}}}` for the given types; with
 * `internalOnly`, types whose public side a chart does not have.
 */
export function endpointValues(ctx: PluginContext, types: readonly string[], internalOnly: readonly string[] = []): Values {
  const out: Record<string, JsonValue> = {};
  for (const type of [...types, ...internalOnly]) {
    const entry = CATALOG[type];
    if (!entry) throw new Error(`no endpoint type "${type}" in the app's catalog (plugins/lib/openstack.ts)`);
    const ep = serviceEndpoints(ctx, {
      name: entry.name,
      service: entry.service,
      port: entry.port,
      path: entry.path,
      publicScheme: tlsEnabled(ctx) ? 'https' : 'http',
    });
    out[type] = internalOnly.includes(type) ? { internal: { ...ep.internal } } : { internal: { ...ep.internal }, public: { ...ep.public } };
  }
  return { endpoints: out };
}

export interface CredentialOptions {
  /** The service's keystone user (identity.auth.<user>). */
  readonly identity?: boolean;
  /** Database endpoint types with an admin and a <user> account: ['oslo_db'], nova adds oslo_db_api and oslo_db_cell0. */
  readonly databases?: readonly string[];
  /** RabbitMQ admin and <user> accounts (oslo_messaging). */
  readonly messaging?: boolean;
  /** The keystone admin (identity.auth.admin); true unless said otherwise. */
  readonly keystoneAdmin?: boolean;
}

/** The generated passwords of one service, in `endpoints.*.auth`. Names: <user>-keystone, <user>-db, <user>-rabbitmq. */
export async function credentials(ctx: PluginContext, user: string, options: CredentialOptions): Promise<Values> {
  const pw = (name: string) => ctx.passwords.getOrGenerate(name);
  const endpoints: Record<string, JsonValue> = {};
  const identityAuth: Record<string, JsonValue> = {};
  if (options.keystoneAdmin !== false) identityAuth.admin = { password: await pw(SHARED.keystoneAdmin) };
  if (options.identity) identityAuth[user] = { password: await pw(`${user}-keystone`) };
  if (Object.keys(identityAuth).length > 0) endpoints.identity = { auth: identityAuth };
  for (const type of options.databases ?? []) {
    endpoints[type] = { auth: { admin: { password: await pw(SHARED.mariadbRoot) }, [user]: { password: await pw(`${user}-db`) } } };
  }
  if (options.messaging) {
    endpoints.oslo_messaging = { auth: { admin: { password: await pw(SHARED.rabbitmqAdmin) }, [user]: { password: await pw(`${user}-rabbitmq`) } } };
  }
  return { endpoints };
}

function isMap(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep merge of plain values, later wins (what the plugin layer's parts add up to). */
export function merge(...parts: readonly Values[]): Values {
  const out: Values = {};
  for (const part of parts) {
    for (const [key, value] of Object.entries(part)) {
      const below = out[key];
      out[key] = isMap(below) && isMap(value) ? merge(below, value) : value;
    }
  }
  return out;
}
