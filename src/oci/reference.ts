/**
 * OCI references: `[host[:port]/]repository[:tag][@algorithm:hex]`, with the
 * grammar of the distribution project's reference package, Docker Hub's
 * normalisation (no host → `docker.io`, a one-part name → `library/NAME`) and
 * Helm's `oci://host/path` form (the first part is always the host).
 */
import { InvalidReference } from './errors.js';

/** Docker Hub's canonical name, and the host its API is served from. */
export const DOCKER_HUB = 'docker.io';
const DOCKER_HUB_API = 'registry-1.docker.io';

const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const DOMAIN_COMPONENT = /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$/;
const PORT = /^[0-9]{1,5}$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$/;
const MAX_NAME = 255;

export class OciReference {
  /** `host[:port]`, normalised (`docker.io` for Docker Hub). */
  readonly registry: string;
  /** Repository path inside the registry (`library/nginx`, `charts/glance`). */
  readonly repository: string;
  readonly tag?: string;
  /** `sha256:…` when the reference pins one. */
  readonly digest?: string;

  constructor(registry: string, repository: string, tag?: string, digest?: string) {
    this.registry = registry;
    this.repository = repository;
    this.tag = tag;
    this.digest = digest;
  }

  /** `registry/repository` */
  get name(): string {
    return `${this.registry}/${this.repository}`;
  }

  /** What the manifest endpoint is asked for: the digest when pinned, else the tag (`latest` when none). */
  get target(): string {
    return this.digest ?? this.tag ?? 'latest';
  }

  withTag(tag: string | undefined): OciReference {
    return new OciReference(this.registry, this.repository, tag, undefined);
  }

  withDigest(digest: string): OciReference {
    return new OciReference(this.registry, this.repository, this.tag, digest);
  }

  /** The same repository, another name inside the registry. */
  withRepository(repository: string): OciReference {
    return new OciReference(this.registry, repository);
  }

  toString(): string {
    return `${this.name}${this.tag === undefined ? '' : `:${this.tag}`}${this.digest === undefined ? '' : `@${this.digest}`}`;
  }
}

export function isValidTag(tag: string): boolean {
  return TAG.test(tag);
}

function isRegistryHost(text: string): boolean {
  let host = text;
  let port: string | undefined;
  const bracket = /^\[([0-9a-fA-F:.]+)\](?::(.*))?$/.exec(text);
  if (bracket) {
    port = bracket[2];
    return (port === undefined || PORT.test(port)) && bracket[1]!.includes(':');
  }
  const colon = text.lastIndexOf(':');
  if (colon >= 0) {
    host = text.slice(0, colon);
    port = text.slice(colon + 1);
    if (!PORT.test(port)) return false;
  }
  return host.length > 0 && host.split('.').every((part) => DOMAIN_COMPONENT.test(part));
}

/** Docker's rule: the first part names a registry when it has a dot or a port, or is `localhost`. */
function looksLikeHost(part: string): boolean {
  return part.includes('.') || part.includes(':') || part === 'localhost' || part.startsWith('[');
}

/**
 * Parses and normalises a reference. `oci://` references must name their
 * registry; plain ones default to Docker Hub as docker does.
 */
export function parseReference(text: string): OciReference {
  const bad = (why: string) => new InvalidReference(JSON.stringify(text), `not a valid OCI reference: ${why}`);
  const oci = text.startsWith('oci://');
  let rest = oci ? text.slice('oci://'.length) : text;
  if (rest.length === 0) throw bad('it is empty');
  if (/\s/.test(rest)) throw bad('it contains white space');

  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw bad(`digest ${JSON.stringify(digest)} is not sha256:<64 hex> (or sha512:<128 hex>)`);
  }

  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.indexOf(':', lastSlash + 1);
  if (colon >= 0 && !rest.slice(lastSlash + 1).startsWith('[')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw bad(`tag ${JSON.stringify(tag)} must be 1-128 of [A-Za-z0-9_.-], not starting with . or -`);
  }

  const parts = rest.split('/');
  let registry: string;
  if (oci || (parts.length > 1 && looksLikeHost(parts[0]!))) {
    registry = parts.shift()!;
    if (!isRegistryHost(registry)) throw bad(`registry ${JSON.stringify(registry)} is not host[:port]`);
    if (parts.length === 0 || parts[0] === '') throw bad('no repository after the registry');
  } else {
    registry = DOCKER_HUB;
  }
  if (registry === 'index.docker.io' || registry === DOCKER_HUB_API) registry = DOCKER_HUB;
  for (const part of parts) {
    if (!PATH_COMPONENT.test(part)) {
      throw bad(`repository part ${JSON.stringify(part)} must be lowercase letters and digits, separated by ".", "_", "__" or "-"`);
    }
  }
  if (registry === DOCKER_HUB && parts.length === 1) parts.unshift('library');
  const repository = parts.join('/');
  if (`${registry}/${repository}`.length > MAX_NAME) throw bad(`the name is longer than ${MAX_NAME} characters`);
  return new OciReference(registry, repository, tag, digest);
}

/** The host the distribution API of `registry` is served from (Docker Hub's differs from its name). */
export function apiHost(registry: string): string {
  return registry === DOCKER_HUB ? DOCKER_HUB_API : registry;
}

/** Host part of `host[:port]` (brackets of an IPv6 literal removed). */
export function hostName(registry: string): string {
  const bracket = /^\[([^\]]+)\]/.exec(registry);
  if (bracket) return bracket[1]!;
  const colon = registry.lastIndexOf(':');
  return colon >= 0 ? registry.slice(0, colon) : registry;
}

/** Loopback hosts: the only ones spoken to over plain HTTP without being listed as insecure. */
export function isLoopback(registry: string): boolean {
  const host = hostName(registry).toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host);
}
