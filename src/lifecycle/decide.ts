/**
 * The one step that decides, from the app's record, what an operation may
 * do (as helm-controller's DetermineReleaseState decides its action): go
 * ahead, resume what an interrupted run of it left, or refuse with the
 * reason and what to run instead. Every operation asks it first, under the
 * app's lock, after a run that was killed has been closed in the history.
 */
import type { AppRecord, AppState } from './record.js';

export type Decision =
  | { readonly kind: 'proceed' }
  /** A run of this operation was interrupted: this one finishes it. */
  | { readonly kind: 'resume'; readonly what: string }
  | { readonly kind: 'refuse'; readonly reason: string };

export type DecidedOperation =
  | { readonly operation: 'apply' | 'remove' | 'delete' }
  | { readonly operation: 'update'; readonly version: string }
  /** `source`: the tarball as the user named it, for the hint to update instead. */
  | { readonly operation: 'upload'; readonly version: string; readonly source: string };

/** What the decision reads of a record. */
export type RecordFacts = Pick<AppRecord, 'name' | 'state' | 'deployed'> & {
  readonly bundle: Pick<AppRecord['bundle'], 'version' | 'source'>;
  readonly previous?: Pick<AppRecord['bundle'], 'version'>;
};

const proceed: Decision = { kind: 'proceed' };
const refuse = (reason: string): Decision => ({ kind: 'refuse', reason });

/** An update whose run ended before it finished: the record still names the version it left. */
function interruptedUpdate(record: RecordFacts): boolean {
  return record.previous !== undefined && (record.state === 'updating' || record.state === 'apply-failed');
}

export function decide(record: RecordFacts | undefined, request: DecidedOperation): Decision {
  if (!record) return request.operation === 'upload' ? proceed : refuse(`no app in this cluster; upload it first (flotilla upload BUNDLE)`);
  const { name, state } = record;
  const finishUpdate = `flotilla update ${record.bundle.source}`;
  switch (request.operation) {
    case 'upload': {
      if (record.bundle.version !== request.version)
        return refuse(`Application-upload rejected: ${name} exists (version ${record.bundle.version}, ${state}); use flotilla update ${request.source}`);
      if (state === 'uploading') return { kind: 'resume', what: `the upload of ${request.version} a run left uploading` };
      if (state === 'upload-failed' || state === 'uploaded') return proceed;
      return refuse(`Application-upload rejected: ${name} ${request.version} is already uploaded and ${state}`);
    }
    case 'apply': {
      if (interruptedUpdate(record)) {
        return refuse(
          `${name}: the update from ${record.previous?.version} to ${record.bundle.version} did not finish (${state}); finish it with ${finishUpdate} (its update hooks and clean-up run), or abort it with flotilla abort ${name} and recover`,
        );
      }
      if (state === 'applying') return { kind: 'resume', what: `the apply a run left applying` };
      if (state === 'recovering') return { kind: 'resume', what: `the recovery to ${record.bundle.version} a run left recovering` };
      if (state === 'uploaded' || state === 'applied' || state === 'apply-failed' || state === 'remove-failed' || state === 'removing') return proceed;
      return refuse(
        `${name} is ${state}; ${state === 'upload-failed' ? 'upload it again first' : state === 'uploading' ? 'its upload did not finish: upload it again first' : 'an apply cannot start from there'}`,
      );
    }
    case 'update': {
      if (interruptedUpdate(record)) {
        if (record.bundle.version === request.version) return { kind: 'resume', what: `the update from ${record.previous?.version} to ${request.version}` };
        return refuse(
          `${name}: the update from ${record.previous?.version} to ${record.bundle.version} did not finish (${state}); finish it first with ${finishUpdate}`,
        );
      }
      if (state !== 'applied' && state !== 'apply-failed' && state !== 'recovering')
        return refuse(`${name} is ${state}; update applies to an applied app (apply it, or upload and apply this version)`);
      if (record.bundle.version === request.version)
        return refuse(`${name} is already at version ${request.version}; to apply it again: flotilla apply ${name}`);
      return proceed;
    }
    case 'remove': {
      const from: readonly AppState[] = ['applied', 'apply-failed', 'applying', 'remove-failed', 'updating', 'recovering'];
      if (state === 'removing') return { kind: 'resume', what: 'the removal a run left removing' };
      return from.includes(state) ? proceed : refuse(`${name} is ${state}: nothing is applied to remove`);
    }
    case 'delete': {
      if ((state === 'uploaded' || state === 'upload-failed' || state === 'uploading') && record.deployed.length === 0) return proceed;
      return refuse(
        `${name} is ${state}${record.deployed.length > 0 ? ` with ${record.deployed.length} release(s) in the cluster` : ''}; remove it first (flotilla remove ${name})`,
      );
    }
  }
}
