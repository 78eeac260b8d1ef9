/**
 * Helpers every OpenStack chart plugin needs: service endpoints derived from
 * the spec's domain, and image references from the target release. Pure
 * functions of the context, so lifecycle plugins can use them too.
 */
import type { PluginContext, Values } from './context.js';

export interface Endpoint {
  readonly host: string;
  readonly port: number;
  readonly scheme: string;
  readonly path: string;
}

export interface ServiceEndpoints {
  /** In-cluster: the Kubernetes Service. */
  readonly internal: Endpoint;
  /** Through the ingress: `<name>.<main.domain>`. */
  readonly public: Endpoint;
}

export interface EndpointOptions {
  /** First label of the public host name: `glance` → glance.<domain>. */
  readonly name: string;
  /** The in-cluster Service name, e.g. `glance-api`. */
  readonly service: string;
  /** The port the Service listens on. */
  readonly port: number;
  /** URL path, e.g. `/v3`; empty by default. */
  readonly path?: string;
  /** Internal scheme; `http` by default. */
  readonly scheme?: string;
  /** Public scheme; `http` by default (TLS ends at the ingress when the app turns it on). */
  readonly publicScheme?: 'http' | 'https';
  /** Public port; 80 for http and 443 for https by default. */
  readonly publicPort?: number;
}

/** Internal and public endpoints of a service; without a `main.domain` the public host is the bare name. */
export function serviceEndpoints(ctx: Pick<PluginContext, 'spec'>, options: EndpointOptions): ServiceEndpoints {
  const path = options.path ?? '';
  const publicScheme = options.publicScheme ?? 'http';
  const domain = ctx.spec.main.domain;
  return {
    internal: { host: options.service, port: options.port, scheme: options.scheme ?? 'http', path },
    public: {
      host: domain ? `${options.name}.${domain}` : options.name,
      port: options.publicPort ?? (publicScheme === 'https' ? 443 : 80),
      scheme: publicScheme,
      path,
    },
  };
}

/** `scheme://host[:port]path`, the port left out when it is the scheme's default. */
export function endpointUrl(endpoint: Endpoint): string {
  const defaultPort = (endpoint.scheme === 'https' && endpoint.port === 443) || (endpoint.scheme === 'http' && endpoint.port === 80);
  return `${endpoint.scheme}://${endpoint.host}${defaultPort ? '' : `:${endpoint.port}`}${endpoint.path}`;
}

/** The first of `fields` the target release (or a custom image) defines. */
export function imageFor(ctx: Pick<PluginContext, 'version'>, ...fields: readonly string[]): string | undefined {
  for (const field of fields) {
    const reference = ctx.version.images[field];
    if (reference !== undefined) return reference;
  }
  return undefined;
}

/**
 * `{images: {tags: {key: reference}}}` for chart image keys, each given the
 * image fields to try in order. Keys with no image anywhere are left out, so
 * the chart's default stays.
 */
export function imageTags(ctx: Pick<PluginContext, 'version'>, keys: Readonly<Record<string, string | readonly string[]>>): Values {
  const tags: Values = {};
  for (const [key, fields] of Object.entries(keys)) {
    const reference = imageFor(ctx, ...(typeof fields === 'string' ? [fields] : fields));
    if (reference !== undefined) tags[key] = reference;
  }
  return Object.keys(tags).length > 0 ? { images: { tags } } : {};
}
