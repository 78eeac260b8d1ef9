/** Typed errors of the lifecycle: each names the app and what stopped the operation. */
import { FlotillaError } from '../diagnostics/index.js';

export class LifecycleError extends FlotillaError {}

/** No record of the app in the cluster. */
export class AppNotFoundError extends LifecycleError {}

/** The app's state does not allow the operation (apply before upload, delete while applied). */
export class AppStateError extends LifecycleError {}

/** The tarball was refused at upload: StarlingX's "Application-upload rejected". */
export class UploadRejectedError extends LifecycleError {}

/** A HelmRelease failed: its name and Flux's reason and message. */
export class ReleaseFailedError extends LifecycleError {
  constructor(
    readonly release: string,
    readonly reason: string,
    readonly detail: string,
  ) {
    super(`release ${release} failed: ${reason}: ${detail}`);
  }
}

/** An update refused before it changed anything (from_versions, same version). */
export class UpdateRefusedError extends LifecycleError {}

/** What an apply would write that the API server refuses for its size: found before anything is written. */
export class ObjectTooLargeError extends LifecycleError {}

/**
 * The stored payload differs from what upload stored, or from the signature
 * the cluster's signing key verifies: refused before any of it is used (its
 * plugins would run on the operator's machine); the app's state stays.
 */
export class PayloadIntegrityError extends LifecycleError {}

/** A release of an update phase failed: the update stopped there, nothing of the later phases written. */
export class PhaseFailedError extends ReleaseFailedError {
  constructor(
    readonly phase: string,
    failed: ReleaseFailedError,
  ) {
    super(failed.release, failed.reason, failed.detail);
    this.message = `update phase ${phase}: ${failed.message}; the later phases were not started`;
  }
}

/** An update phase asked for that the app does not have or is not held, or a staged update asked not to wait: refused before anything is written. */
export class PhaseUsageError extends LifecycleError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}
