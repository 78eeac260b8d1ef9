/**
 * The distribution project's reference grammar (its `reference` package):
 * `[host[:port]/]repository[:tag][@algorithm:hex]`, with Docker Hub's
 * normalisation (no host → `docker.io`, a one-part name → `library/NAME`)
 * and Helm's `oci://host/path` form (the first part is always the host).
 * The one parser of image and chart references: src/oci's client, the
 * version catalog and the values' image check all read through it.
 */

/** Docker Hub's canonical name. */
export const DOCKER_HUB = 'docker.io';
/** The host Docker Hub's API is served from, which also names it. */
export const DOCKER_HUB_API = 'registry-1.docker.io';

const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const DOMAIN_COMPONENT = /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$/;
const PORT = /^[0-9]{1,5}$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$/;
const MAX_NAME = 255;

/** A reference's parts, normalised. */
export interface ReferenceParts {
  readonly registry: string;
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
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
 * Splits and normalises a reference, or says why it is not one. `oci://`
 * references must name their registry; plain ones default to Docker Hub as
 * docker does.
 */
export function splitReference(text: string): ReferenceParts | { readonly problem: string } {
  const bad = (problem: string) => ({ problem });
  const oci = text.startsWith('oci://');
  let rest = oci ? text.slice('oci://'.length) : text;
  if (rest.length === 0) return bad('it is empty');
  if (/\s/.test(rest)) return bad('it contains white space');

  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return bad(`digest ${JSON.stringify(digest)} is not sha256:<64 hex> (or sha512:<128 hex>)`);
  }

  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.indexOf(':', lastSlash + 1);
  if (colon >= 0 && !rest.slice(lastSlash + 1).startsWith('[')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) return bad(`tag ${JSON.stringify(tag)} must be 1-128 of [A-Za-z0-9_.-], not starting with . or -`);
  }

  const parts = rest.split('/');
  let registry: string;
  if (oci || (parts.length > 1 && looksLikeHost(parts[0]!))) {
    registry = parts.shift()!;
    if (!isRegistryHost(registry)) return bad(`registry ${JSON.stringify(registry)} is not host[:port]`);
    if (parts.length === 0 || parts[0] === '') return bad('no repository after the registry');
  } else {
    registry = DOCKER_HUB;
  }
  if (registry === 'index.docker.io' || registry === DOCKER_HUB_API) registry = DOCKER_HUB;
  for (const part of parts) {
    if (!PATH_COMPONENT.test(part)) {
      return bad(`repository part ${JSON.stringify(part)} must be lowercase letters and digits, separated by ".", "_", "__" or "-"`);
    }
  }
  if (registry === DOCKER_HUB && parts.length === 1) parts.unshift('library');
  const repository = parts.join('/');
  if (`${registry}/${repository}`.length > MAX_NAME) return bad(`the name is longer than ${MAX_NAME} characters`);
  return { registry, repository, ...(tag === undefined ? {} : { tag }), ...(digest === undefined ? {} : { digest }) };
}

/** Why `reference` is not a container image reference (the grammar above, without a scheme), or undefined when it is one. */
export function malformedImageReference(reference: string): string | undefined {
  if (reference.startsWith('oci://')) return 'an image reference names no scheme';
  const parts = splitReference(reference);
  return 'problem' in parts ? parts.problem : undefined;
}
