/**
 * Application tarballs in a registry: one build, many clusters. A bundle is
 * an OCI artifact of its own kind:
 * - config `application/vnd.flotilla.app.config.v1+json`: `{"app", "version", "signed"}`;
 * - layer 1 `application/vnd.flotilla.app.bundle.v1.tar+gzip`: the tarball as built;
 * - layer 2 `application/vnd.flotilla.app.signature.v1` (signed tarballs):
 *   checksum.sha256.sig, so a registry browser or policy engine sees the
 *   signature without downloading the tarball (the verifier still checks the
 *   copy inside the tarball).
 * Pulling checks every blob's digest and size against the manifest, with
 * bounds, and hands the file to the verifier; it trusts nothing else.
 */
import { basename, join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { bundleMetadata, METADATA_FILE, openBundle, SIGNATURE_FILE } from '../tarball/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import { parseYamlValue } from '../yaml/index.js';
import { asReference, digestOfFile, type OciClient } from './client.js';
import { ContentTooLarge, InvalidReference, ManifestUnknown, RegistryProtocolError } from './errors.js';
import { MediaType, type Descriptor, type ImageManifest } from './media-types.js';
import { isValidTag, type OciReference } from './reference.js';
import { fileErrorReason, fileErrorText } from '../files/index.js';
import { isFileNamePart } from '../names/index.js';

/** The config blob of a bundle artifact. */
export interface BundleConfig {
  readonly app: string;
  readonly version: string;
  readonly signed: boolean;
}

export interface PushBundleOptions {
  /** Move a tag that holds another bundle (default: refuse, as published versions do not change). */
  readonly force?: boolean;
  /** `org.opencontainers.image.created` (default: now). */
  readonly created?: Date;
  /** Size of each chunk of the tarball's upload (default: the client's). */
  readonly chunkBytes?: number;
}

export interface PushedBundle {
  readonly app: string;
  readonly version: string;
  readonly signed: boolean;
  /** `host/repo:tag@sha256:…` */
  readonly reference: string;
  readonly digest: string;
  /** Size of the tarball in bytes. */
  readonly size: number;
  /** `pushed`, or `unchanged` when the tag already held this very tarball. */
  readonly status: 'pushed' | 'unchanged';
}

export interface PullBundleOptions {
  /** Largest tarball accepted, in bytes (default 4 GiB). */
  readonly maxBytes?: number;
}

export interface PulledBundle {
  /** The tarball on disk, digest and size checked: give it to the verifier. */
  readonly file: string;
  /** The signature layer's text (checksum.sha256.sig) when the artifact has one; the tarball carries its own copy. */
  readonly signature?: string;
  readonly app: string;
  readonly version: string;
  /** `host/repo:tag@sha256:…` of the manifest pulled. */
  readonly reference: string;
  readonly digest: string;
  readonly size: number;
}

const DEFAULT_MAX_BUNDLE = 4 * 1024 * 1024 * 1024;
const MAX_CONFIG = 64 * 1024;
const MAX_SIGNATURE = 64 * 1024;

/** A bundle the registry does not hold in flotilla's format, or holds malformed. */
export class NotABundle extends RegistryProtocolError {}

async function readBundleFacts(tarball: string): Promise<{ app: string; version: string; signature?: Buffer }> {
  const label = basename(tarball);
  const { files } = await openBundle(tarball).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== undefined && !(error instanceof FlotillaError))
      throw new FlotillaError(`${tarball}: cannot read the tarball (${fileErrorReason(error) ?? code})`);
    throw error;
  });
  const metadata = bundleMetadata(files);
  if (!metadata) throw new FlotillaError(`${label}: not an application tarball: ${METADATA_FILE} is missing`);
  const doc = parseYamlValue(metadata.toString('utf8'), `${label}#${METADATA_FILE}`);
  const { app_name: app, app_version: version } = (doc ?? {}) as { app_name?: unknown; app_version?: unknown };
  if (typeof app !== 'string' || app === '') throw new FlotillaError(`${label}: ${METADATA_FILE}: app_name must be a non-empty string`);
  if (typeof version !== 'string' && typeof version !== 'number') throw new FlotillaError(`${label}: ${METADATA_FILE}: app_version must be set`);
  return { app, version: String(version), signature: files.get(SIGNATURE_FILE) };
}

/**
 * Pushes an application tarball to `target` (`oci://HOST/REPO/APP[:TAG]`;
 * the tag defaults to the app version). A tag already holding this tarball
 * is left alone; one holding something else is refused unless `force`.
 */
export async function pushBundle(client: OciClient, tarball: string, target: OciReference | string, options: PushBundleOptions = {}): Promise<PushedBundle> {
  const facts = await readBundleFacts(tarball);
  let ref = asReference(target);
  if (ref.digest !== undefined) throw new InvalidReference(ref.toString(), 'a push names a tag, not a digest');
  if (ref.tag === undefined) {
    if (!isValidTag(facts.version))
      throw new InvalidReference(ref.toString(), `app version ${JSON.stringify(facts.version)} cannot be a tag: name one (…:TAG)`);
    ref = ref.withTag(facts.version);
  }
  const signed = facts.signature !== undefined;
  const existing = await client.getManifest(ref).catch((error: unknown) => {
    if (error instanceof ManifestUnknown) return undefined;
    throw error;
  });

  const { digest, size } = await digestOfFile(tarball);
  if (existing && !options.force) {
    const held =
      'layers' in existing.manifest ? (existing.manifest as ImageManifest).layers.find((l) => l.mediaType === MediaType.flotillaAppBundle) : undefined;
    if (held?.digest === digest) {
      return {
        app: facts.app,
        version: facts.version,
        signed,
        reference: ref.withDigest(existing.descriptor.digest).toString(),
        digest: existing.descriptor.digest,
        size,
        status: 'unchanged',
      };
    }
    throw new FlotillaError(
      `${ref}: the tag already holds ${held ? `another bundle (${held.digest})` : `something else (${existing.descriptor.mediaType} ${existing.descriptor.digest})`}; push under a new tag, or --force to move it`,
    );
  }
  const layer = await client.pushBlobFile(ref, tarball, MediaType.flotillaAppBundle, { chunkBytes: options.chunkBytes, digest });
  const config: BundleConfig = { app: facts.app, version: facts.version, signed };
  const layers: Descriptor[] = [{ ...layer, annotations: { 'org.opencontainers.image.title': basename(tarball) } }];
  if (facts.signature) {
    const signature = await client.pushBlob(ref, facts.signature, MediaType.flotillaAppSignature);
    layers.push({ ...signature, annotations: { 'org.opencontainers.image.title': SIGNATURE_FILE } });
  }
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: MediaType.ociManifest,
    config: await client.pushBlob(ref, Buffer.from(JSON.stringify(config)), MediaType.flotillaAppConfig),
    layers,
    annotations: {
      'org.opencontainers.image.created': (options.created ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      'org.opencontainers.image.title': facts.app,
      'org.opencontainers.image.version': facts.version,
    },
  };
  const pushed = await client.pushManifest(ref, Buffer.from(JSON.stringify(manifest)), MediaType.ociManifest);
  return {
    app: facts.app,
    version: facts.version,
    signed,
    reference: ref.withDigest(pushed.digest).toString(),
    digest: pushed.digest,
    size: layer.size,
    status: 'pushed',
  };
}

function parseConfig(subject: string, bytes: Buffer): BundleConfig {
  let config: unknown;
  try {
    config = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new NotABundle(subject, 'the bundle config is not JSON');
  }
  const { app, version, signed } = (config ?? {}) as Record<string, unknown>;
  // A pulled file is named by them, and they come from the registry.
  if (typeof app !== 'string' || !isFileNamePart(app)) throw new NotABundle(subject, `the bundle config's app ${JSON.stringify(app)} is not a name`);
  if (typeof version !== 'string' || !isFileNamePart(version))
    throw new NotABundle(subject, `the bundle config's version ${JSON.stringify(version)} is not a version`);
  return { app, version, signed: signed === true };
}

/**
 * Downloads the bundle `source` (`oci://HOST/REPO/APP:TAG` or `…@sha256:…`)
 * into `destDir` as `<app>-<version>.tgz`. Every blob's digest and size is
 * checked against the manifest; sizes are bounded before anything is
 * downloaded; nothing is left behind on failure. The tarball is not
 * verified here: pass `file` to the verifier.
 */
export async function pullBundle(client: OciClient, source: OciReference | string, destDir: string, options: PullBundleOptions = {}): Promise<PulledBundle> {
  const ref = asReference(source);
  const fetched = await client.getManifest(ref);
  const subject = ref.toString();
  if (!('layers' in fetched.manifest) || (fetched.manifest as ImageManifest).config?.mediaType !== MediaType.flotillaAppConfig) {
    const kind = 'layers' in fetched.manifest ? `config ${(fetched.manifest as ImageManifest).config?.mediaType}` : fetched.descriptor.mediaType;
    throw new NotABundle(subject, `not a flotilla bundle (${kind}); push one with flotilla push`);
  }
  const manifest = fetched.manifest as ImageManifest;
  const bundles = manifest.layers.filter((l) => l.mediaType === MediaType.flotillaAppBundle);
  const signatures = manifest.layers.filter((l) => l.mediaType === MediaType.flotillaAppSignature);
  const others = manifest.layers.filter((l) => l !== bundles[0] && l !== signatures[0]);
  if (bundles.length !== 1 || signatures.length > 1 || others.length > 0) {
    throw new NotABundle(
      subject,
      `a bundle has one tarball layer and at most one signature layer; this one has ${manifest.layers.map((l) => l.mediaType).join(', ') || 'no layers'}`,
    );
  }
  const bundle = bundles[0]!;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BUNDLE;
  for (const [what, layer, max] of [
    ['bundle config', manifest.config, MAX_CONFIG],
    ['tarball', bundle, maxBytes],
    ['signature', signatures[0], MAX_SIGNATURE],
  ] as const) {
    if (layer === undefined) continue;
    if (!Number.isSafeInteger(layer.size) || layer.size < 0) throw new NotABundle(subject, `the ${what} has no valid size`);
    if (layer.size > max) throw new ContentTooLarge(subject, `the ${what} is ${layer.size} bytes, more than the ${max} allowed`);
  }
  const config = parseConfig(subject, await client.getBlob(ref, manifest.config, { maxBytes: MAX_CONFIG }));
  const signature = signatures[0] ? (await client.getBlob(ref, signatures[0], { maxBytes: MAX_SIGNATURE })).toString('utf8') : undefined;
  await mkdir(destDir, { recursive: true }).catch((error: unknown) => {
    throw new FlotillaError(`${destDir}: cannot create the download folder (${fileErrorText(error)})`);
  });
  const file = join(destDir, `${config.app}-${config.version}.tgz`);
  await client.downloadBlob(ref, bundle, file, { maxBytes });
  return {
    file,
    signature,
    app: config.app,
    version: config.version,
    reference: ref.withDigest(fetched.descriptor.digest).toString(),
    digest: fetched.descriptor.digest,
    size: bundle.size,
  };
}
