/**
 * Typed errors of the OCI distribution client. Each names the reference (or
 * registry) it is about, so a caller can print it as is, and carries the
 * fields a caller reacts to (status, digests, the registry's error code).
 */
import { FlotillaError } from '../diagnostics/index.js';

/** Base of every registry error: `subject` is the reference or registry host the message is about. */
export class RegistryError extends FlotillaError {
  readonly subject: string;
  /** HTTP status when the registry answered, else undefined. */
  readonly status?: number;
  /** The registry's error code (`MANIFEST_UNKNOWN`, `DENIED`, …) when it sent one. */
  readonly code?: string;

  constructor(subject: string, message: string, options: { status?: number; code?: string; cause?: unknown } = {}) {
    super(`${subject}: ${message}`, { cause: options.cause });
    this.subject = subject;
    this.status = options.status;
    this.code = options.code;
  }
}

/** A reference that does not follow `[host[:port]/]repo[:tag][@sha256:…]`. */
export class InvalidReference extends RegistryError {}

/** No connection (refused, DNS failure, TLS failure, timeout). */
export class RegistryUnreachable extends RegistryError {}

/** The tag or digest does not exist in the repository (404 MANIFEST_UNKNOWN / NAME_UNKNOWN). */
export class ManifestUnknown extends RegistryError {}

/** A blob the registry does not have. */
export class BlobUnknown extends RegistryError {}

/** Authentication failed or was refused (401/403, or a token endpoint refusing the credentials). */
export class Unauthorized extends RegistryError {}

/** Content whose digest or size is not the one it was addressed or announced by. */
export class DigestMismatch extends RegistryError {
  readonly expected: string;
  readonly actual: string;

  constructor(subject: string, expected: string, actual: string, what = 'content') {
    super(subject, `${what} digest mismatch: expected ${expected}, got ${actual}`);
    this.expected = expected;
    this.actual = actual;
  }
}

/** A manifest or blob larger than the caller allows (a registry may not make us fill the disk). */
export class ContentTooLarge extends RegistryError {}

/** Any other refusal or malformed answer. */
export class RegistryProtocolError extends RegistryError {}
