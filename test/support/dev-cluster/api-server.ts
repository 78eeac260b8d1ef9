/**
 * TEST FIXTURE (dev cluster): the HTTP face of the fixture's Kubernetes API
 * (node:http on 127.0.0.1). Routes the REST paths to ./cluster.ts, streams
 * watches as JSON lines with bookmarks, prints Tables for kubectl, serves
 * discovery and OpenAPI, and applies the request faults of ./faults.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createHash } from 'node:crypto';
import type { Cluster, WatchEvent } from './cluster.js';
import * as discovery from './discovery.js';
import type { Faults } from './faults.js';
import { isObject, type JsonObject } from './patch.js';
import { decodeProtobuf } from './protobuf.js';
import type { ResourceType } from './resources.js';
import { ApiError, badRequest, injected, methodNotAllowed, noSuchResource, unsupportedMediaType } from './status.js';
import { toTable, type IncludeObject } from './table.js';

export interface ApiServerOptions {
  /** How often open watches that asked for bookmarks get one (the real server: about a minute). */
  readonly bookmarkIntervalMs?: number;
  /** Largest request body accepted (the real server: 3 MiB). */
  readonly maxBodyBytes?: number;
}

export interface RequestRecord {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly userAgent: string;
  /** Date.now() when it was answered. */
  readonly at: number;
}

const JSON_TYPE = 'application/json';

/**
 * A boolean query parameter as the API server converts it (apimachinery's
 * Convert_Slice_string_To_bool): absent, `0` and `false` (any case) are
 * false; every other value, the empty one included, is true. The official
 * Python client sends `watch=True`.
 */
export const queryBool = (q: URLSearchParams, name: string): boolean => {
  const value = q.get(name);
  return value !== null && value !== '0' && value.toLowerCase() !== 'false';
};

/** The client closed the connection before its request body was complete. */
class ClientGone extends Error {}

interface Route {
  type: ResourceType;
  namespace: string | undefined;
  name?: string;
  subresource?: string;
}

export class ApiServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly watches = new Set<{ bookmark(): void; end(): void; wantsBookmarks: boolean }>();
  private bookmarkTimer: NodeJS.Timeout | undefined;
  private port = 0;
  /** Every request answered, oldest first (bounded): tests check how a client talked to the server. */
  readonly requests: RequestRecord[] = [];

  constructor(
    private readonly cluster: Cluster,
    private readonly faults: Faults,
    private readonly options: ApiServerOptions = {},
  ) {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    // Keep-alive connections must not hold the fixture open at stop.
    this.server.keepAliveTimeout = 5_000;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async listen(port = 0): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.bookmarkTimer ??= setInterval(() => {
      for (const watch of this.watches) if (watch.wantsBookmarks) watch.bookmark();
    }, this.options.bookmarkIntervalMs ?? 60_000);
    this.bookmarkTimer.unref();
  }

  /** Cuts every open connection; with `downForMs` also stops listening that long, then listens on the same port again. */
  async interrupt(downForMs: number): Promise<void> {
    for (const watch of this.watches) watch.end();
    for (const socket of this.sockets) socket.destroy();
    if (downForMs > 0) {
      await new Promise<void>((resolve) => this.server.close(() => resolve()));
      await new Promise((resolve) => setTimeout(resolve, downForMs));
      await this.listen(this.port);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.bookmarkTimer);
    for (const watch of this.watches) watch.end();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private record(req: IncomingMessage, status: number): void {
    this.requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', status, userAgent: req.headers['user-agent'] ?? '', at: Date.now() });
    if (this.requests.length > 5_000) this.requests.splice(0, 1_000);
  }

  private send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    this.record(req, status);
    if (res.headersSent || res.destroyed) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const rawUrl = req.url ?? '/';
    const fault = this.faults.requestFault(method, rawUrl);
    if (fault?.kind === 'drop') {
      this.record(req, 0);
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'fail') {
      const error = injected(fault.status, fault.retryAfterSeconds);
      this.send(req, res, error.code, error.status, fault.retryAfterSeconds !== undefined ? { 'Retry-After': String(fault.retryAfterSeconds) } : {});
      return;
    }
    try {
      const url = new URL(rawUrl, 'http://127.0.0.1');
      const raw = method === 'GET' || method === 'HEAD' ? Buffer.alloc(0) : await this.readBody(req);
      const contentType = req.headers['content-type'] ?? '';
      let body = raw.toString('utf8');
      if (raw.length > 0 && /protobuf|cbor/.test(contentType)) {
        // kubectl's typed create sub-commands send protobuf; the fixture reads the few kinds they create.
        const decoded = contentType.includes('protobuf') ? decodeProtobuf(raw) : undefined;
        if (!decoded) {
          throw unsupportedMediaType([
            'application/json',
            'application/yaml',
            'application/json-patch+json',
            'application/merge-patch+json',
            'application/apply-patch+yaml',
            'application/strategic-merge-patch+json',
          ]);
        }
        body = JSON.stringify(decoded);
      }
      if (method === 'GET' && this.serveDiscovery(req, res, url)) return;
      if (method === 'POST' && url.pathname === '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews') return this.accessReview(req, res, body);
      const route = this.route(url.pathname);
      if (!route) throw noSuchResource();
      await this.serveResource(req, res, url, route, method, body);
    } catch (error) {
      if (error instanceof ClientGone) this.record(req, 0);
      else if (error instanceof ApiError) this.send(req, res, error.code, error.status);
      else {
        const failure = injected(500);
        this.send(req, res, 500, { ...failure.status, message: `Internal error occurred: ${(error as Error).message}` });
      }
    }
  }

  /**
   * `kubectl auth can-i`: the fixture has no authentication or RBAC, so it
   * answers every SelfSubjectAccessReview allowed, as an API server run with
   * --authorization-mode=AlwaysAllow does.
   */
  private accessReview(req: IncomingMessage, res: ServerResponse, body: string): void {
    let review: unknown;
    try {
      review = JSON.parse(body);
    } catch (error) {
      throw badRequest(`the object provided is unrecognized: ${(error as Error).message}`);
    }
    const spec = isObject(review) && isObject(review.spec) ? review.spec : {};
    this.send(req, res, 201, {
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec,
      status: { allowed: true },
    });
  }

  private readBody(req: IncomingMessage): Promise<Buffer> {
    const limit = this.options.maxBodyBytes ?? 3 * 1024 * 1024;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit)
          reject(
            new ApiError({
              kind: 'Status',
              apiVersion: 'v1',
              metadata: {},
              status: 'Failure',
              message: 'the request body is too large',
              reason: 'RequestEntityTooLarge',
              code: 413,
            }),
          );
        else chunks.push(chunk);
      });
      req.on('end', () => resolve(Buffer.concat(chunks)));
      req.on('error', reject);
      // A client that dies mid-request leaves nothing half-done: the request is dropped unread.
      req.on('close', () => {
        if (!req.complete) reject(new ClientGone());
      });
    });
  }

  private crdSchema = (t: ResourceType): JsonObject | undefined => {
    if (!t.crd) return undefined;
    const crdType = this.cluster.types.get('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
    const crd = this.cluster.find(crdType, '', t.crd);
    const versions = crd && isObject(crd.spec) && Array.isArray(crd.spec.versions) ? crd.spec.versions : [];
    const version = versions.find((v) => isObject(v) && v.name === t.version);
    const schema = isObject(version) && isObject(version.schema) ? version.schema.openAPIV3Schema : undefined;
    return isObject(schema) ? schema : undefined;
  };

  /** Discovery and OpenAPI documents; false when the path is not one of them. */
  private serveDiscovery(req: IncomingMessage, res: ServerResponse, url: URL): boolean {
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const types = this.cluster.types;
    let body: unknown;
    if (path === '/version') body = discovery.versionInfo();
    else if (path === '/healthz' || path === '/readyz' || path === '/livez') {
      this.record(req, 200);
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      return true;
    } else if (path === '/api') body = discovery.coreVersions(`127.0.0.1:${this.port}`);
    else if (path === '/apis') body = discovery.groupList(types);
    else if (path === '/api/v1') body = discovery.resourceList(types, '', 'v1');
    else if (/^\/apis\/[^/]+$/.test(path)) body = discovery.group(types, path.split('/')[2]!) ?? null;
    else if (/^\/apis\/[^/]+\/[^/]+$/.test(path)) {
      const [, , group, version] = path.split('/');
      body = discovery.resourceList(types, group!, version!) ?? null;
    } else if (path === '/openapi/v2') {
      const accept = req.headers.accept ?? '';
      if (accept && !accept.includes('json') && !accept.includes('*/*')) {
        this.send(req, res, 406, {
          ...noSuchResource().status,
          code: 406,
          reason: 'NotAcceptable',
          message: 'only application/json is served by the dev cluster test fixture',
        });
        return true;
      }
      body = discovery.openApiV2(types, this.crdSchema);
    } else if (path === '/openapi/v3') body = discovery.openApiV3Root(types, this.typesHash());
    else if (path.startsWith('/openapi/v3/')) {
      const rest = path.slice('/openapi/v3/'.length).split('/');
      const [group, version] = rest[0] === 'api' ? ['', rest[1]!] : [rest[1]!, rest[2]!];
      body = discovery.openApiV3GroupVersion(types, group, version, this.crdSchema) ?? null;
    } else return false;
    if (body === null) throw noSuchResource();
    this.send(req, res, 200, body);
    return true;
  }

  private typesHash(): string {
    return createHash('sha256')
      .update(
        this.cluster.types
          .all()
          .map((t) => `${t.group}/${t.version}/${t.plural}`)
          .sort()
          .join(','),
      )
      .digest('hex')
      .slice(0, 16)
      .toUpperCase();
  }

  private route(pathname: string): Route | undefined {
    const parts = pathname
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent);
    let group: string;
    let version: string;
    let rest: string[];
    if (parts[0] === 'api' && parts.length >= 2) [group, version, rest] = ['', parts[1]!, parts.slice(2)];
    else if (parts[0] === 'apis' && parts.length >= 3) [group, version, rest] = [parts[1]!, parts[2]!, parts.slice(3)];
    else return undefined;
    const typeOf = (plural: string) => this.cluster.type(group, version, plural);
    if (rest[0] === 'namespaces' && rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize') {
      const type = typeOf(rest[2]!);
      if (!type.namespaced) throw noSuchResource();
      return { type, namespace: rest[1]!, ...(rest[3] ? { name: rest[3] } : {}), ...(rest[4] ? { subresource: rest[4] } : {}) };
    }
    if (rest.length === 0 || rest.length > 3) return undefined;
    return { type: typeOf(rest[0]!), namespace: undefined, ...(rest[1] ? { name: rest[1] } : {}), ...(rest[2] ? { subresource: rest[2] } : {}) };
  }

  private async serveResource(req: IncomingMessage, res: ServerResponse, url: URL, route: Route, method: string, body: string): Promise<void> {
    const q = url.searchParams;
    const { type, name, subresource } = route;
    const namespace = route.namespace ?? '';
    const scale = subresource === 'scale' && type.scaleSubresource && name !== undefined;
    if (subresource !== undefined && !scale && (subresource !== 'status' || !type.statusSubresource)) throw noSuchResource();
    const warnings: string[] = [];
    const writeOptions = {
      ...(q.get('fieldManager') ? { fieldManager: q.get('fieldManager')! } : {}),
      ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
      ...(q.get('fieldValidation') ? { fieldValidation: q.get('fieldValidation')! } : {}),
      dryRun: q.getAll('dryRun').includes('All'),
      force: queryBool(q, 'force'),
      warnings,
    };
    const send = (status: number, payload: unknown) =>
      this.send(req, res, status, payload, warnings.length ? { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', ') } : {});
    if (scale) {
      if (method === 'GET') return send(200, this.cluster.scale(type, namespace, name));
      if (method !== 'PUT' && method !== 'PATCH') throw methodNotAllowed();
      const write = { contentType: method === 'PUT' ? 'application/json' : (req.headers['content-type'] ?? ''), body };
      return send(200, this.cluster.scale(type, namespace, name, write, writeOptions));
    }
    const parseJson = (): unknown => {
      try {
        return body ? JSON.parse(body) : undefined;
      } catch (error) {
        throw badRequest(`the object provided is unrecognized: ${(error as Error).message}`);
      }
    };
    const accept = req.headers.accept ?? '';
    const asTable = accept.includes('as=Table');
    const include = (q.get('includeObject') ?? 'Metadata') as IncludeObject;
    const rv = () => String(this.cluster.store.resourceVersion);
    const selectors = { labelSelector: q.get('labelSelector'), fieldSelector: q.get('fieldSelector') };
    if (name === undefined) {
      const scope = type.namespaced && route.namespace !== undefined ? route.namespace : undefined;
      switch (method) {
        case 'GET': {
          if (queryBool(q, 'watch')) return this.watch(req, res, type, scope, q, asTable, include);
          const limit = Number(q.get('limit') ?? 0);
          const list = this.cluster.list(type, scope, { ...selectors, ...(limit > 0 ? { limit } : {}), continue: q.get('continue') });
          if (asTable) {
            const table = toTable(type, list.items as JsonObject[], rv(), include);
            table.metadata = list.metadata!;
            return this.send(req, res, 200, table);
          }
          return this.send(req, res, 200, list);
        }
        case 'POST':
          return send(201, this.cluster.create(type, namespace, parseJson(), writeOptions));
        case 'DELETE': {
          const options = this.deleteOptions(q, parseJson());
          return this.send(req, res, 200, this.cluster.deleteCollection(type, scope, selectors, options));
        }
        default:
          throw methodNotAllowed();
      }
    }
    switch (method) {
      case 'GET': {
        const object = this.cluster.get(type, namespace, name);
        return this.send(req, res, 200, asTable ? toTable(type, [object], rv(), include) : object);
      }
      case 'PUT':
        return send(200, this.cluster.update(type, namespace, name, parseJson(), writeOptions, subresource));
      case 'PATCH': {
        const contentType = req.headers['content-type'] ?? '';
        const existed = this.cluster.find(type, namespace, name) !== undefined;
        const result = this.cluster.patch(type, namespace, name, contentType, body, writeOptions, subresource);
        return send(existed ? 200 : 201, result);
      }
      case 'DELETE': {
        // The Status of a deletion, or the object while finalizers keep it.
        return this.send(req, res, 200, this.cluster.delete(type, namespace, name, this.deleteOptions(q, parseJson())));
      }
      default:
        throw methodNotAllowed();
    }
  }

  private deleteOptions(
    q: URLSearchParams,
    body: unknown,
  ): { propagationPolicy?: string; preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: boolean } {
    const fromBody = isObject(body) ? body : {};
    const policy = q.get('propagationPolicy') ?? (typeof fromBody.propagationPolicy === 'string' ? fromBody.propagationPolicy : undefined);
    if (policy && !['Orphan', 'Background', 'Foreground'].includes(policy)) {
      throw badRequest(`propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`);
    }
    const dryRun = q.getAll('dryRun').includes('All') || (Array.isArray(fromBody.dryRun) && fromBody.dryRun.includes('All'));
    return {
      ...(policy ? { propagationPolicy: policy } : {}),
      ...(isObject(fromBody.preconditions) ? { preconditions: fromBody.preconditions as { uid?: string; resourceVersion?: string } } : {}),
      dryRun,
    };
  }

  /** A watch: JSON lines, one event each, until the client goes, timeoutSeconds passes, or the server stops. */
  private watch(
    req: IncomingMessage,
    res: ServerResponse,
    type: ResourceType,
    namespace: string | undefined,
    q: URLSearchParams,
    asTable: boolean,
    include: IncludeObject,
  ): void {
    this.record(req, 200);
    res.writeHead(200, { 'Content-Type': JSON_TYPE, 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
    res.flushHeaders();
    const write = (event: WatchEvent) => {
      if (res.destroyed || res.writableEnded) return;
      const object =
        asTable && event.type !== 'ERROR' && event.type !== 'BOOKMARK'
          ? toTable(type, [event.object], String(this.cluster.store.resourceVersion), include)
          : event.object;
      res.write(`${JSON.stringify({ type: event.type, object })}\n`);
    };
    let stop: () => void = () => undefined;
    let timeout: NodeJS.Timeout | undefined;
    const watch = {
      wantsBookmarks: queryBool(q, 'allowWatchBookmarks'),
      bookmark: () => write({ type: 'BOOKMARK', object: this.cluster.bookmark(type) }),
      end: () => {
        stop();
        clearTimeout(timeout);
        this.watches.delete(watch);
        if (!res.writableEnded) res.end();
      },
    };
    this.watches.add(watch);
    // A client that dies mid-watch just goes away: the fixture forgets the watch and keeps serving.
    res.on('close', () => watch.end());
    try {
      let ended = false;
      stop = this.cluster.watch(
        type,
        namespace,
        {
          labelSelector: q.get('labelSelector'),
          fieldSelector: q.get('fieldSelector'),
          resourceVersion: q.get('resourceVersion'),
          allowWatchBookmarks: watch.wantsBookmarks,
          sendInitialEvents: queryBool(q, 'sendInitialEvents'),
        },
        (event) => {
          write(event);
          if (event.type === 'ERROR') ended = true;
        },
      );
      if (ended) return watch.end();
    } catch (error) {
      if (error instanceof ApiError) write({ type: 'ERROR', object: error.status as unknown as JsonObject });
      return watch.end();
    }
    const seconds = Number(q.get('timeoutSeconds') ?? 0);
    if (seconds > 0) timeout = setTimeout(() => watch.end(), seconds * 1000);
  }
}
