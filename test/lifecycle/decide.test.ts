/**
 * The decision step as a table: for each app state (and an interrupted
 * update), what each operation may do — proceed, resume, or refuse with the
 * reason and what to run instead.
 */
import { describe, expect, it } from 'vitest';
import { decide, type DecidedOperation, type RecordFacts } from '../../src/lifecycle/index.js';
import type { AppState } from '../../src/lifecycle/index.js';

const record = (state: AppState, more: Partial<RecordFacts> = {}): RecordFacts => ({
  name: 'app',
  state,
  deployed: ['a'],
  bundle: { version: '2', source: 'app-2.tgz' },
  ...more,
});
const kind = (facts: RecordFacts | undefined, request: DecidedOperation) => decide(facts, request).kind;

const APPLY: DecidedOperation = { operation: 'apply' };
const REMOVE: DecidedOperation = { operation: 'remove' };
const DELETE: DecidedOperation = { operation: 'delete' };
const UPDATE_3: DecidedOperation = { operation: 'update', version: '3' };
const UPDATE_2: DecidedOperation = { operation: 'update', version: '2' };
const UPLOAD_2: DecidedOperation = { operation: 'upload', version: '2', source: 'app-2.tgz' };

describe('the decision step', () => {
  it.each<[AppState, string, string, string, string, string]>([
    // state          apply      remove     delete     update→3   upload 2
    ['uploading', 'refuse', 'refuse', 'refuse', 'refuse', 'resume'],
    ['uploaded', 'proceed', 'refuse', 'refuse', 'refuse', 'proceed'],
    ['upload-failed', 'refuse', 'refuse', 'refuse', 'refuse', 'proceed'],
    ['applying', 'resume', 'proceed', 'refuse', 'refuse', 'refuse'],
    ['applied', 'proceed', 'proceed', 'refuse', 'proceed', 'refuse'],
    ['apply-failed', 'proceed', 'proceed', 'refuse', 'proceed', 'refuse'],
    ['recovering', 'resume', 'proceed', 'refuse', 'proceed', 'refuse'],
    ['removing', 'proceed', 'resume', 'refuse', 'refuse', 'refuse'],
    ['remove-failed', 'proceed', 'proceed', 'refuse', 'refuse', 'refuse'],
  ])('%s: apply %s, remove %s, delete %s, update %s, upload %s', (state, apply, remove, del, update, upload) => {
    const facts = record(state);
    expect([kind(facts, APPLY), kind(facts, REMOVE), kind(facts, DELETE), kind(facts, UPDATE_3), kind(facts, UPLOAD_2)]).toEqual([
      apply,
      remove,
      del,
      update,
      upload,
    ]);
  });

  it('delete proceeds only with no release in the cluster', () => {
    expect(kind(record('uploaded', { deployed: [] }), DELETE)).toBe('proceed');
    expect(decide(record('uploaded'), DELETE)).toEqual({
      kind: 'refuse',
      reason: 'app is uploaded with 1 release(s) in the cluster; remove it first (flotilla remove app)',
    });
  });

  it('an interrupted update (killed while updating, or aborted) is resumed by update to the same version, and apply says so', () => {
    for (const state of ['updating', 'apply-failed'] as const) {
      const facts = record(state, { previous: { version: '1' } });
      expect(decide(facts, UPDATE_2)).toEqual({ kind: 'resume', what: 'the update from 1 to 2' });
      expect(decide(facts, APPLY)).toEqual({
        kind: 'refuse',
        reason: `app: the update from 1 to 2 did not finish (${state}); finish it with flotilla update app-2.tgz (its update hooks and clean-up run), or abort it with flotilla abort app and recover`,
      });
      expect(decide(facts, UPDATE_3)).toMatchObject({ kind: 'refuse', reason: expect.stringContaining('finish it first with flotilla update app-2.tgz') });
      expect(kind(facts, REMOVE)).toBe('proceed');
    }
  });

  it('update to the version applied is refused, naming apply', () => {
    expect(decide(record('applied'), UPDATE_2)).toEqual({ kind: 'refuse', reason: 'app is already at version 2; to apply it again: flotilla apply app' });
  });

  it('upload of another version names update; an app not there is uploaded, nothing else', () => {
    expect(decide(record('applied'), { operation: 'upload', version: '3', source: 'app-3.tgz' })).toEqual({
      kind: 'refuse',
      reason: 'Application-upload rejected: app exists (version 2, applied); use flotilla update app-3.tgz',
    });
    expect(kind(undefined, UPLOAD_2)).toBe('proceed');
    expect(kind(undefined, APPLY)).toBe('refuse');
  });
});
