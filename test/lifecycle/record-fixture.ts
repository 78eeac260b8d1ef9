/** An app record as upload leaves it, for tests on the in-memory cluster. */
import type { AppRecord } from '../../src/lifecycle/index.js';

export const appRecord = (name = 'app'): AppRecord => ({
  name,
  state: 'uploaded',
  bundle: {
    version: '1.0.0',
    sha256: 'a'.repeat(64),
    source: `${name}-1.0.0.tgz`,
    payload: `flotilla-bundle-${name}-1.0.0`,
    charts: [],
    releases: [],
    repository: { url: 'oci://registry.test/charts', type: 'oci' },
    maintainUserOverrides: true,
    updateFailureNoRollback: false,
    fromVersions: [],
    applyProgressAdjust: 0,
    uploaded: '2026-01-01T00:00:00.000Z',
  },
  userOverrides: {},
  deployed: [],
  history: [],
});
