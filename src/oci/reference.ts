/**
 * OCI references as the client uses them; their grammar (the distribution
 * project's, with Docker Hub's normalisation and Helm's `oci://` form) is
 * src/names `splitReference`.
 */
import { DOCKER_HUB, DOCKER_HUB_API, isValidTag, splitReference } from '../names/index.js';
import { InvalidReference } from './errors.js';

export { DOCKER_HUB };

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

export { isValidTag };

/** Parses and normalises a reference (the grammar: src/names `splitReference`); throws InvalidReference. */
export function parseReference(text: string): OciReference {
  const parts = splitReference(text);
  if ('problem' in parts) throw new InvalidReference(JSON.stringify(text), `not a valid OCI reference: ${parts.problem}`);
  return new OciReference(parts.registry, parts.repository, parts.tag, parts.digest);
}

/** The host the distribution API of `registry` is served from (Docker Hub's differs from its name). */
export function apiHost(registry: string): string {
  return registry === DOCKER_HUB ? DOCKER_HUB_API : registry;
}

/** Host part of `host[:port]` (brackets of an IPv6 literal removed). */
function hostName(registry: string): string {
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
