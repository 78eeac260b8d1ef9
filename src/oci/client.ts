/**
 * A client of the OCI distribution API (and Docker's registry v2 API, its
 * ancestor): resolve tags to digests, read manifests and blobs with their
 * digests checked, push blobs (monolithic or in chunks) and manifests, list
 * tags. Authentication follows the registry's challenge: anonymous first,
 * then Basic, or a Bearer token from the realm the registry names (with the
 * Docker config's credentials), retried once. Plain HTTP only for loopback
 * registries and those the caller lists as insecure.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { setTimeout as delay } from 'node:timers/promises';
import { parseChallenges, type AuthChallenge } from './challenge.js';
import { loadCredentials, type CredentialStore, type RegistryCredential } from './credentials.js';
import {
  BlobUnknown,
  ContentTooLarge,
  DigestMismatch,
  ManifestUnknown,
  RegistryError,
  RegistryProtocolError,
  RegistryUnreachable,
  Unauthorized,
} from './errors.js';
import { MANIFEST_MEDIA_TYPES, type Descriptor, type ImageIndex, type ImageManifest, isIndexMediaType } from './media-types.js';
import { apiHost, isLoopback, OciReference, parseReference } from './reference.js';
import { fileErrorReason, fileErrorText } from '../files/index.js';

export interface OciClientOptions {
  /** Docker-style config file with credentials (`--registry-config`); default `~/.docker/config.json`. */
  readonly registryConfig?: string;
  /** Credentials to use instead of reading a config file. */
  readonly credentials?: CredentialStore;
  /** Registries (`host` or `host:port`) spoken to over plain HTTP; loopback ones always are. */
  readonly insecureRegistries?: readonly string[];
  /** Time allowed for one request without a body to stream (default 30 s). */
  readonly timeoutMs?: number;
  /** Time allowed for one blob transfer (default 10 min). */
  readonly blobTimeoutMs?: number;
  /** Time a request may go without receiving a byte, headers or body, whatever its total time allows (default 30 s). */
  readonly idleTimeoutMs?: number;
  /** Waits before trying a read again when the registry is busy or drops the connection (default 0.5 s, 1.5 s). */
  readonly retryDelaysMs?: readonly number[];
}

/** A manifest as read from the registry, its digest checked. */
export interface FetchedManifest {
  readonly reference: OciReference;
  /** mediaType, digest and size of the manifest itself. */
  readonly descriptor: Descriptor;
  readonly bytes: Buffer;
  readonly manifest: ImageManifest | ImageIndex;
}

export interface BlobReadOptions {
  /** Refuse a blob larger than this (bytes); default 64 MiB in memory. */
  readonly maxBytes?: number;
}

export interface PushFileOptions {
  /** Size of each PATCH of a chunked upload; files no larger go in one PUT (default 16 MiB). */
  readonly chunkBytes?: number;
  /** The file's digest when the caller already has it (from {@link digestOfFile}): saves reading it twice. */
  readonly digest?: string;
}

/** What a registry may answer for a manifest: 4 MiB, the limit registries enforce on push. */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const DEFAULT_BLOB_BYTES = 64 * 1024 * 1024;
const DEFAULT_CHUNK_BYTES = 16 * 1024 * 1024;
const TRANSIENT_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);
const TRANSIENT_FAILURES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

type Action = 'pull' | 'push';

interface RequestSpec {
  readonly method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'PATCH';
  /** A path under the registry (`/v2/...`) or an absolute URL the registry gave (an upload location). */
  readonly url: string;
  readonly headers?: Record<string, string>;
  readonly body?: Buffer;
  readonly action: Action;
  readonly timeoutMs?: number;
}

interface CachedToken {
  readonly token: string;
  readonly expiresAt: number;
}

function sha256(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** `sha256:<hex>` of `bytes` (the digest OCI addresses content by). */
export function digestOf(bytes: Buffer): string {
  return sha256(bytes);
}

/** `sha256:<hex>` and size of a file, read as a stream. */
export async function digestOfFile(file: string): Promise<{ digest: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { digest: `sha256:${hash.digest('hex')}`, size };
}

/** A reference as given: parsed when it is text. */
export function asReference(reference: OciReference | string): OciReference {
  return typeof reference === 'string' ? parseReference(reference) : reference;
}

function basicHeader(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/**
 * A registry that trickles (a byte now and then) is given up on when no byte
 * came for the idle time, however long the whole request may take: the
 * timer starts with the request and restarts with every piece of the body.
 */
class IdleWatch {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly idleMs: number,
    private readonly reason: RegistryUnreachable,
  ) {
    this.restart();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private restart(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.controller.abort(this.reason), this.idleMs);
    // A body nobody reads must not keep the process alive.
    this.timer.unref();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  /** The response, its body passed through a stream that restarts the timer on every piece and stops it at the end. */
  watch(response: Response): Response {
    if (!response.body) {
      this.stop();
      return response;
    }
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, controller) => {
          this.restart();
          controller.enqueue(chunk);
        },
        flush: () => this.stop(),
      }),
    );
    const watched = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    Object.defineProperty(watched, 'url', { value: response.url });
    return watched;
  }
}

function describeFailure(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'timed out';
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

/** The `errors` array of a registry's JSON error body (distribution spec), when it has one. */
async function registryErrors(response: Response): Promise<{ code?: string; message: string }> {
  const text = await response.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { errors?: { code?: string; message?: string; detail?: unknown }[] };
    const first = parsed.errors?.[0];
    if (first) return { code: first.code, message: [first.code, first.message].filter(Boolean).join(': ') };
  } catch {
    // not JSON: the status text says enough
  }
  return { message: `${response.status} ${response.statusText}`.trim() };
}

/** Reads a response body, refusing more than `max` bytes. */
async function readBounded(response: Response, max: number, subject: string, what: string): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > max) {
    await response.body?.cancel();
    throw new ContentTooLarge(subject, `${what} is ${declared} bytes, more than the ${max} allowed`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  if (response.body) {
    for await (const chunk of response.body) {
      total += chunk.length;
      if (total > max) throw new ContentTooLarge(subject, `${what} is more than the ${max} bytes allowed`);
      chunks.push(Buffer.from(chunk as Uint8Array));
    }
  }
  return Buffer.concat(chunks, total);
}

export class OciClient {
  private readonly credentials: CredentialStore;
  private readonly insecure: ReadonlySet<string>;
  private readonly timeoutMs: number;
  private readonly blobTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly retryDelaysMs: readonly number[];
  /** Bearer tokens by `registry|scope`. */
  private readonly tokens = new Map<string, CachedToken>();
  /** Registries that asked for Basic authentication: sent up front afterwards. */
  private readonly basicRegistries = new Set<string>();

  constructor(options: OciClientOptions = {}) {
    this.credentials = options.credentials ?? loadCredentials(options.registryConfig);
    this.insecure = new Set((options.insecureRegistries ?? []).map((h) => h.toLowerCase()));
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.blobTimeoutMs = options.blobTimeoutMs ?? 600_000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
    this.retryDelaysMs = options.retryDelaysMs ?? [500, 1500];
  }

  /** `http` for loopback and listed registries (by `host:port` or bare host), else `https`. */
  private scheme(registry: string): 'http' | 'https' {
    const host = registry.replace(/:\d+$/, '');
    return isLoopback(registry) || this.insecure.has(registry.toLowerCase()) || this.insecure.has(host.toLowerCase()) ? 'http' : 'https';
  }

  private baseUrl(registry: string): string {
    return `${this.scheme(registry)}://${apiHost(registry)}`;
  }

  private static repositoryPath(ref: OciReference): string {
    return `/v2/${ref.repository}`;
  }

  // ---- public API ------------------------------------------------------

  /**
   * The digest, media type and size a reference points to: HEAD on the
   * manifest (the `Docker-Content-Digest` header), falling back to GET and
   * hashing the body when the registry does not say. A reference pinned by
   * digest is checked to exist.
   */
  async resolve(reference: OciReference | string): Promise<Descriptor> {
    const ref = asReference(reference);
    const response = await this.send(ref, {
      method: 'HEAD',
      url: `${OciClient.repositoryPath(ref)}/manifests/${ref.target}`,
      headers: { accept: MANIFEST_MEDIA_TYPES.join(', ') },
      action: 'pull',
    });
    if (response.status === 404) throw this.unknownManifest(ref, { message: 'MANIFEST_UNKNOWN' });
    const digest = response.headers.get('docker-content-digest');
    const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim();
    const size = Number(response.headers.get('content-length') ?? NaN);
    if (response.ok && digest && mediaType && Number.isFinite(size)) {
      if (ref.digest && digest !== ref.digest) throw new DigestMismatch(ref.toString(), ref.digest, digest, 'manifest');
      return { mediaType, digest, size };
    }
    return (await this.getManifest(ref)).descriptor;
  }

  /** The manifest (or index) a reference points to, its digest checked against the reference and the registry's header. */
  async getManifest(reference: OciReference | string): Promise<FetchedManifest> {
    const ref = asReference(reference);
    const subject = ref.toString();
    const response = await this.send(ref, {
      method: 'GET',
      url: `${OciClient.repositoryPath(ref)}/manifests/${ref.target}`,
      headers: { accept: MANIFEST_MEDIA_TYPES.join(', ') },
      action: 'pull',
    });
    if (response.status === 404) throw this.unknownManifest(ref, await registryErrors(response));
    if (!response.ok) throw await this.failure(ref, response, 'reading the manifest');
    const bytes = await readBounded(response, MAX_MANIFEST_BYTES, subject, 'the manifest');
    const digest = sha256(bytes);
    if (ref.digest && ref.digest.startsWith('sha256:') && ref.digest !== digest) throw new DigestMismatch(subject, ref.digest, digest, 'manifest');
    const announced = response.headers.get('docker-content-digest');
    if (announced && announced.startsWith('sha256:') && announced !== digest) throw new DigestMismatch(subject, announced, digest, 'manifest');
    let manifest: ImageManifest | ImageIndex;
    try {
      manifest = JSON.parse(bytes.toString('utf8')) as ImageManifest | ImageIndex;
    } catch (error) {
      throw new RegistryProtocolError(subject, `the manifest is not JSON: ${(error as Error).message}`);
    }
    if (typeof manifest !== 'object' || manifest === null || manifest.schemaVersion !== 2) {
      throw new RegistryProtocolError(subject, 'the manifest is not schemaVersion 2 (Docker schema 1 manifests are not supported)');
    }
    const mediaType = manifest.mediaType ?? response.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
    const isIndex = isIndexMediaType(mediaType) || ('manifests' in manifest && !('layers' in manifest));
    if (
      isIndex ? !Array.isArray((manifest as ImageIndex).manifests) : !Array.isArray((manifest as ImageManifest).layers) || !(manifest as ImageManifest).config
    ) {
      throw new RegistryProtocolError(subject, `the ${isIndex ? 'index has no manifests list' : 'manifest has no config or layers'}`);
    }
    return { reference: ref, descriptor: { mediaType, digest, size: bytes.length }, bytes, manifest };
  }

  /** True when the repository holds the blob. */
  async blobExists(repository: OciReference | string, digest: string): Promise<boolean> {
    const ref = asReference(repository);
    const response = await this.send(ref, { method: 'HEAD', url: `${OciClient.repositoryPath(ref)}/blobs/${digest}`, action: 'pull' });
    if (response.status === 404) return false;
    if (!response.ok) throw await this.failure(ref, response, `checking blob ${digest}`);
    return true;
  }

  /** A blob in memory, its digest and size checked (size against the descriptor when one is given). */
  async getBlob(repository: OciReference | string, blob: Descriptor | string, options: BlobReadOptions = {}): Promise<Buffer> {
    const ref = asReference(repository);
    const descriptor = typeof blob === 'string' ? undefined : blob;
    const digest = typeof blob === 'string' ? blob : blob.digest;
    const max = Math.min(options.maxBytes ?? DEFAULT_BLOB_BYTES, descriptor?.size ?? Infinity);
    const subject = ref.withDigest(digest).toString();
    const response = await this.openBlob(ref, digest);
    const bytes = await readBounded(response, max, subject, `blob ${digest}`);
    if (descriptor && bytes.length !== descriptor.size) throw new DigestMismatch(subject, `${descriptor.size} bytes`, `${bytes.length} bytes`, 'blob size');
    const actual = sha256(bytes);
    if (actual !== digest) throw new DigestMismatch(subject, digest, actual, 'blob');
    return bytes;
  }

  /**
   * Streams a blob into `file` (written beside it, renamed once the digest
   * and size match; nothing left behind otherwise). `maxBytes` bounds it even
   * when the descriptor claims more.
   */
  async downloadBlob(repository: OciReference | string, blob: Descriptor, file: string, options: { maxBytes: number }): Promise<void> {
    const ref = asReference(repository);
    const subject = ref.withDigest(blob.digest).toString();
    if (blob.size > options.maxBytes) throw new ContentTooLarge(subject, `blob is ${blob.size} bytes, more than the ${options.maxBytes} allowed`);
    const response = await this.openBlob(ref, blob.digest);
    // Unique per run, so two pulls into one folder never write the same temp file.
    const partial = `${file}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
    const hash = createHash('sha256');
    let total = 0;
    async function* counted(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
      for await (const chunk of source) {
        total += chunk.length;
        if (total > blob.size) throw new DigestMismatch(subject, `${blob.size} bytes`, `more than ${blob.size} bytes`, 'blob size');
        hash.update(chunk);
        yield chunk;
      }
    }
    try {
      const body = response.body ? Readable.fromWeb(response.body as WebReadableStream<Uint8Array>) : Readable.from([]);
      await pipeline(body, counted, createWriteStream(partial, { mode: 0o644 }));
      if (total !== blob.size) throw new DigestMismatch(subject, `${blob.size} bytes`, `${total} bytes`, 'blob size');
      const actual = `sha256:${hash.digest('hex')}`;
      if (actual !== blob.digest) throw new DigestMismatch(subject, blob.digest, actual, 'blob');
      await rename(partial, file);
    } catch (error) {
      await rm(partial, { force: true }).catch(() => undefined);
      const code = (error as NodeJS.ErrnoException).code;
      if (!(error instanceof RegistryError) && code !== undefined && !code.startsWith('UND_'))
        throw new RegistryError(file, `cannot write the download (${fileErrorReason(error) ?? code})`, { cause: error });
      if (!(error instanceof RegistryError)) throw new RegistryUnreachable(subject, `the download broke off (${describeFailure(error)})`, { cause: error });
      throw error;
    }
  }

  /** Uploads a blob held in memory (POST then PUT); skipped when the registry already has it. */
  async pushBlob(repository: OciReference | string, bytes: Buffer, mediaType = 'application/octet-stream'): Promise<Descriptor> {
    const ref = asReference(repository);
    const digest = sha256(bytes);
    const descriptor: Descriptor = { mediaType, digest, size: bytes.length };
    if (await this.blobExists(ref, digest)) return descriptor;
    const location = await this.startUpload(ref);
    await this.finishUpload(ref, location, digest, bytes);
    return descriptor;
  }

  /**
   * Uploads a file: hashed first (so an existing blob is not sent again),
   * then in one PUT when it fits in a chunk, else PATCH by PATCH with
   * `Content-Range`, closed by a PUT with the digest.
   */
  async pushBlobFile(repository: OciReference | string, file: string, mediaType: string, options: PushFileOptions = {}): Promise<Descriptor> {
    const ref = asReference(repository);
    const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    const handle = await open(file, 'r').catch((error: unknown) => {
      throw new RegistryError(file, `cannot read the file to upload (${fileErrorText(error)})`, { cause: error });
    });
    try {
      const { size } = await handle.stat();
      const digest = options.digest ?? (await digestOfFile(file)).digest;
      const descriptor: Descriptor = { mediaType, digest, size };
      if (await this.blobExists(ref, digest)) return descriptor;
      const read = async (start: number, length: number) => {
        const buffer = Buffer.alloc(length);
        const { bytesRead } = await handle.read(buffer, 0, length, start);
        if (bytesRead !== length) throw new RegistryError(file, 'the file changed while it was uploaded');
        return buffer;
      };
      let location = await this.startUpload(ref);
      if (size <= chunkBytes) {
        await this.finishUpload(ref, location, digest, await read(0, size));
        return descriptor;
      }
      for (let offset = 0; offset < size; offset += chunkBytes) {
        const chunk = await read(offset, Math.min(chunkBytes, size - offset));
        const response = await this.send(ref, {
          method: 'PATCH',
          url: location,
          headers: {
            'content-type': 'application/octet-stream',
            'content-range': `${offset}-${offset + chunk.length - 1}`,
          },
          body: chunk,
          action: 'push',
          timeoutMs: this.blobTimeoutMs,
        });
        if (response.status !== 202) throw await this.failure(ref, response, `uploading ${file} (bytes ${offset}-${offset + chunk.length - 1})`);
        await response.body?.cancel();
        location = this.uploadLocation(ref, response);
      }
      await this.finishUpload(ref, location, digest, undefined);
      return descriptor;
    } finally {
      await handle.close();
    }
  }

  /**
   * Stores a manifest under a tag or its digest (`ref.tag`, else the digest).
   * The registry's `Docker-Content-Digest` must match the bytes sent.
   */
  async pushManifest(reference: OciReference | string, bytes: Buffer, mediaType: string): Promise<Descriptor> {
    const ref = asReference(reference);
    if (bytes.length > MAX_MANIFEST_BYTES)
      throw new ContentTooLarge(ref.toString(), `manifest is ${bytes.length} bytes, more than the ${MAX_MANIFEST_BYTES} registries accept`);
    const digest = sha256(bytes);
    const response = await this.send(ref, {
      method: 'PUT',
      url: `${OciClient.repositoryPath(ref)}/manifests/${ref.tag ?? digest}`,
      headers: { 'content-type': mediaType },
      body: bytes,
      action: 'push',
    });
    if (response.status !== 201 && response.status !== 200) throw await this.failure(ref, response, 'pushing the manifest');
    await response.body?.cancel();
    const announced = response.headers.get('docker-content-digest');
    if (announced && announced !== digest) throw new DigestMismatch(ref.toString(), digest, announced, 'stored manifest');
    return { mediaType, digest, size: bytes.length };
  }

  /** Every tag of a repository, following `Link: <…>; rel="next"` pages. */
  async listTags(repository: OciReference | string): Promise<string[]> {
    const ref = asReference(repository);
    const tags: string[] = [];
    let url: string | undefined = `${OciClient.repositoryPath(ref)}/tags/list`;
    for (let page = 0; url !== undefined; page++) {
      if (page >= 1000) throw new RegistryProtocolError(ref.name, 'the tag list has more than 1000 pages');
      const response = await this.send(ref, { method: 'GET', url, action: 'pull' });
      if (response.status === 404) throw this.unknownManifest(ref.withTag(undefined), await registryErrors(response));
      if (!response.ok) throw await this.failure(ref, response, 'listing tags');
      const body = (await readBounded(response, MAX_MANIFEST_BYTES, ref.name, 'the tag list')).toString('utf8');
      let parsed: { tags?: unknown };
      try {
        parsed = JSON.parse(body) as { tags?: unknown };
      } catch {
        throw new RegistryProtocolError(ref.name, 'the tag list is not JSON');
      }
      if (parsed.tags !== null && parsed.tags !== undefined && !Array.isArray(parsed.tags))
        throw new RegistryProtocolError(ref.name, 'the tag list has no "tags" array');
      for (const tag of (parsed.tags as unknown[] | null | undefined) ?? []) if (typeof tag === 'string') tags.push(tag);
      const next = /<([^>]+)>\s*;\s*rel="?next"?/.exec(response.headers.get('link') ?? '');
      url = next ? new URL(next[1]!, this.baseUrl(ref.registry)).toString() : undefined;
    }
    return tags;
  }

  // ---- uploads ---------------------------------------------------------

  private async startUpload(ref: OciReference): Promise<string> {
    const response = await this.send(ref, { method: 'POST', url: `${OciClient.repositoryPath(ref)}/blobs/uploads/`, action: 'push' });
    if (response.status !== 202) throw await this.failure(ref, response, 'starting a blob upload');
    await response.body?.cancel();
    return this.uploadLocation(ref, response);
  }

  private uploadLocation(ref: OciReference, response: Response): string {
    const location = response.headers.get('location');
    if (!location) throw new RegistryProtocolError(ref.name, 'the registry gave no Location for the upload');
    return new URL(location, this.baseUrl(ref.registry)).toString();
  }

  private async finishUpload(ref: OciReference, location: string, digest: string, body: Buffer | undefined): Promise<void> {
    const url = new URL(location);
    url.searchParams.set('digest', digest);
    const response = await this.send(ref, {
      method: 'PUT',
      url: url.toString(),
      headers: { 'content-type': 'application/octet-stream' },
      body: body ?? Buffer.alloc(0),
      action: 'push',
      timeoutMs: this.blobTimeoutMs,
    });
    if (response.status !== 201) throw await this.failure(ref, response, `completing the upload of ${digest}`);
    await response.body?.cancel();
    const stored = response.headers.get('docker-content-digest');
    if (stored && stored !== digest) throw new DigestMismatch(ref.name, digest, stored, 'uploaded blob');
  }

  private async openBlob(ref: OciReference, digest: string): Promise<Response> {
    const response = await this.send(ref, {
      method: 'GET',
      url: `${OciClient.repositoryPath(ref)}/blobs/${digest}`,
      action: 'pull',
      timeoutMs: this.blobTimeoutMs,
    });
    if (response.status === 404) {
      await response.body?.cancel();
      throw new BlobUnknown(ref.withDigest(digest).toString(), 'blob not found in the registry');
    }
    if (!response.ok) throw await this.failure(ref, response, `reading blob ${digest}`);
    return response;
  }

  // ---- transport and authentication -------------------------------------

  private unknownManifest(ref: OciReference, error: { code?: string; message: string }): ManifestUnknown {
    const what =
      error.code === 'NAME_UNKNOWN'
        ? `repository ${ref.repository} not found`
        : ref.digest
          ? `manifest ${ref.digest} not found`
          : `tag ${ref.target} not found`;
    return new ManifestUnknown(ref.toString(), `${what} in ${ref.registry}`, { status: 404, code: error.code });
  }

  private async failure(ref: OciReference, response: Response, doing: string): Promise<RegistryError> {
    const error = await registryErrors(response);
    const options = { status: response.status, code: error.code };
    if (response.status === 401 || response.status === 403) {
      return new Unauthorized(
        ref.toString(),
        `${doing}: access denied by ${ref.registry} (${error.message}); check the credentials for ${ref.registry} in the registry config`,
        options,
      );
    }
    return new RegistryProtocolError(ref.toString(), `${doing}: ${ref.registry} answered ${error.message}`, options);
  }

  /** Sends a request, answering an authentication challenge once. Statuses are the caller's to judge. */
  private async send(ref: OciReference, spec: RequestSpec): Promise<Response> {
    const scope = `repository:${ref.repository}:${spec.action === 'push' ? 'pull,push' : 'pull'}`;
    const first = await this.fetchOnce(ref, spec, this.cachedAuthorization(ref.registry, scope));
    if (first.status !== 401) return first;
    const header = first.headers.get('www-authenticate') ?? '';
    await first.body?.cancel();
    const authorization = await this.answerChallenge(ref, parseChallenges(header), scope);
    const second = await this.fetchOnce(ref, spec, authorization);
    if (second.status === 401) {
      const error = await registryErrors(second);
      const advice = this.credentials.credentialFor(ref.registry)
        ? `${ref.registry} refused the credentials (${error.message}); check the entry for ${ref.registry} in the registry config`
        : `${ref.registry} refused anonymous access to ${spec.action} (${error.message}); the registry config has no credentials for it`;
      throw new Unauthorized(ref.toString(), advice, { status: 401, code: error.code });
    }
    return second;
  }

  /**
   * One request. Reads (GET, HEAD) are tried again, twice at most, when the
   * registry is busy (429, 502, 503, 504) or drops the connection: honouring
   * a short `Retry-After`, else after 0.5 s and 1.5 s. Writes are not: an
   * upload is not known to be idempotent.
   */
  private async fetchOnce(ref: OciReference, spec: RequestSpec, authorization: string | undefined): Promise<Response> {
    const url = spec.url.startsWith('/') ? `${this.baseUrl(ref.registry)}${spec.url}` : spec.url;
    const headers: Record<string, string> = { 'user-agent': 'flotilla', ...spec.headers };
    if (authorization) headers.authorization = authorization;
    if (spec.body) headers['content-length'] = String(spec.body.length);
    const retries = spec.method === 'GET' || spec.method === 'HEAD' ? this.retryDelaysMs : [];
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      const idle = new IdleWatch(
        this.idleTimeoutMs,
        new RegistryUnreachable(ref.toString(), `${new URL(url).origin} sent nothing for ${this.idleTimeoutMs / 1000} s; giving up`),
      );
      try {
        response = idle.watch(
          await fetch(url, {
            method: spec.method,
            headers,
            body: spec.body,
            redirect: 'follow',
            signal: AbortSignal.any([AbortSignal.timeout(spec.timeoutMs ?? this.timeoutMs), idle.signal]),
          }),
        );
      } catch (error) {
        idle.stop();
        if (error === idle.signal.reason) throw error;
        const reason = describeFailure(error);
        if (attempt < retries.length && TRANSIENT_FAILURES.has(reason)) {
          await delay(retries[attempt]!);
          continue;
        }
        throw new RegistryUnreachable(ref.toString(), `cannot reach ${new URL(url).origin} (${reason})`, { cause: error });
      }
      if (attempt >= retries.length || !TRANSIENT_STATUSES.has(response.status)) return response;
      const retryAfter = Number(response.headers.get('retry-after'));
      await response.body?.cancel();
      await delay(Number.isFinite(retryAfter) && retryAfter > 0 && retryAfter <= 10 ? retryAfter * 1000 : retries[attempt]!);
    }
  }

  private cachedAuthorization(registry: string, scope: string): string | undefined {
    const credential = this.credentials.credentialFor(registry);
    if (credential?.kind === 'registry-token') return `Bearer ${credential.token}`;
    const cached = this.tokens.get(`${registry}|${scope}`);
    if (cached && cached.expiresAt > Date.now()) return `Bearer ${cached.token}`;
    if (credential?.kind === 'basic' && this.basicRegistries.has(registry)) return basicHeader(credential.username, credential.password);
    return undefined;
  }

  /** Refuses to send secrets in the clear anywhere but loopback or a registry the user listed as insecure. */
  private checkSecretTransport(ref: OciReference, url: URL): void {
    if (url.protocol === 'https:') return;
    const host = url.host;
    if (isLoopback(host) || this.scheme(host) === 'http') return;
    throw new Unauthorized(ref.toString(), `refusing to send credentials over plain HTTP to ${url.origin}`);
  }

  private async answerChallenge(ref: OciReference, challenges: AuthChallenge[], scope: string): Promise<string> {
    const credential = this.credentials.credentialFor(ref.registry);
    const bearer = challenges.find((c) => c.scheme === 'bearer');
    if (bearer) return `Bearer ${await this.fetchToken(ref, bearer, scope, credential)}`;
    const basic = challenges.find((c) => c.scheme === 'basic');
    if (basic) {
      if (credential?.kind !== 'basic') {
        throw new Unauthorized(ref.toString(), `${ref.registry} requires a username and password, and the registry config has none for it`, { status: 401 });
      }
      this.checkSecretTransport(ref, new URL(this.baseUrl(ref.registry)));
      this.basicRegistries.add(ref.registry);
      return basicHeader(credential.username, credential.password);
    }
    throw new Unauthorized(
      ref.toString(),
      `${ref.registry} requires authentication this client does not speak (${challenges.map((c) => c.scheme).join(', ') || 'no WWW-Authenticate challenge'})`,
      { status: 401 },
    );
  }

  /** A Bearer token from the realm the registry named (distribution's token authentication). */
  private async fetchToken(ref: OciReference, challenge: AuthChallenge, scope: string, credential: RegistryCredential | undefined): Promise<string> {
    const realm = challenge.params.realm;
    if (!realm) throw new Unauthorized(ref.toString(), `${ref.registry} asked for a Bearer token without naming a realm`, { status: 401 });
    let url: URL;
    try {
      url = new URL(realm);
    } catch {
      throw new Unauthorized(ref.toString(), `${ref.registry} named a token realm that is not a URL: ${JSON.stringify(realm)}`, { status: 401 });
    }
    const service = challenge.params.service;
    const scopes = challenge.params.scope ? challenge.params.scope.split(' ') : [scope];
    const headers: Record<string, string> = { 'user-agent': 'flotilla' };
    let init: RequestInit;
    if (credential?.kind === 'identity-token') {
      this.checkSecretTransport(ref, url);
      const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: credential.token, client_id: 'flotilla' });
      if (service) form.set('service', service);
      form.set('scope', scopes.join(' '));
      init = { method: 'POST', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() };
    } else {
      if (service) url.searchParams.set('service', service);
      for (const s of scopes) url.searchParams.append('scope', s);
      if (credential?.kind === 'basic') {
        this.checkSecretTransport(ref, url);
        headers.authorization = basicHeader(credential.username, credential.password);
      }
      init = { method: 'GET', headers };
    }
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (error) {
      throw new RegistryUnreachable(ref.toString(), `cannot reach the token service ${url.origin} (${describeFailure(error)})`, { cause: error });
    }
    if (response.status === 401 || response.status === 403) {
      await response.body?.cancel();
      throw new Unauthorized(
        ref.toString(),
        credential
          ? `the token service ${url.origin} refused the credentials for ${ref.registry}`
          : `the token service ${url.origin} requires credentials for ${ref.registry}, and the registry config has none`,
        { status: response.status },
      );
    }
    if (!response.ok)
      throw new Unauthorized(ref.toString(), `the token service ${url.origin} answered ${response.status} ${response.statusText}`, { status: response.status });
    let body: { token?: unknown; access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse((await readBounded(response, 1024 * 1024, ref.toString(), 'the token answer')).toString('utf8')) as typeof body;
    } catch (error) {
      if (error instanceof RegistryError) throw error;
      throw new Unauthorized(ref.toString(), `the token service ${url.origin} answered something that is not JSON`);
    }
    const token = typeof body.token === 'string' && body.token !== '' ? body.token : typeof body.access_token === 'string' ? body.access_token : '';
    if (token === '') throw new Unauthorized(ref.toString(), `the token service ${url.origin} answered without a token`);
    // Tokens live at least 60 s by the spec; renew a little early.
    const lifetime = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 60;
    this.tokens.set(`${ref.registry}|${scope}`, { token, expiresAt: Date.now() + (lifetime - 5) * 1000 });
    return token;
  }
}
