/**
 * The kept kustomize build (src/lifecycle/kustomize.ts), held to the real
 * `kubectl kustomize`: a folder made from the same (payload digest and cut
 * top kustomization, as render.ts says) built by the same kubectl is not
 * built again and gives kubectl's own output; a folder made from something
 * else, another kubectl, or no key at all builds again; an entry planted in
 * the cache folder (no valid seal under this user's key) is never used.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kustomizeBuild, kustomizeCacheDir } from '../../src/lifecycle/kustomize.js';
import { toolPath } from '../../src/tools/index.js';
import { tempDir, writeFiles } from '../support/app-fixture.js';

let manifests: string;
let runs: string;
let wrapper: string;
const realKubectl = toolPath('kubectl');
const saved = process.env.FLOTILLA_KUBECTL;

/** kubectl behind a wrapper that counts its runs. */
beforeEach(() => {
  const dir = tempDir('flotilla-kustomize-test-');
  runs = join(dir, 'runs');
  writeFileSync(runs, '');
  wrapper = join(dir, 'kubectl');
  writeFileSync(wrapper, `#!/bin/sh\necho run >> '${runs}'\nexec '${realKubectl}' "$@"\n`);
  chmodSync(wrapper, 0o755);
  process.env.FLOTILLA_KUBECTL = wrapper;
  manifests = writeFiles(join(dir, 'manifests'), {
    'kustomization.yaml': 'resources: [db]\n',
    'db/kustomization.yaml':
      'namespace: os\nresources: [release.yaml]\nsecretGenerator:\n  - name: db-static-overrides\n    files: [db-static-overrides.yaml]\n',
    'db/release.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db\ndata:\n  size: "1"\n',
    'db/db-static-overrides.yaml': 'replicas: 1\n',
  });
});

afterEach(() => {
  if (saved === undefined) delete process.env.FLOTILLA_KUBECTL;
  else process.env.FLOTILLA_KUBECTL = saved;
});

/** What a folder was made from: a payload digest and a top kustomization, as render.ts keys it. */
const madeFrom = (payload: string) => JSON.stringify({ payload, 'kustomization.yaml': 'resources: [db]\n' });
const kubectlRuns = () => readFileSync(runs, 'utf8').split('\n').filter(Boolean).length;
const oracle = () => execFileSync(realKubectl, ['kustomize', manifests], { encoding: 'utf8' });
let apps = 0;
const newApp = () => `kustomize-test-${process.pid}-${++apps}`;

describe('the kept kustomize build', () => {
  it("builds the same files once, and gives kubectl's own output from the cache", async () => {
    const app = newApp();
    const first = await kustomizeBuild(manifests, { appName: app, madeFrom: madeFrom('a1') });
    const second = await kustomizeBuild(manifests, { appName: app, madeFrom: madeFrom('a1') });
    expect(kubectlRuns()).toBe(1);
    expect(first).toBe(oracle());
    expect(second).toBe(first);
  });

  it('builds again for a folder made from something else, for another kubectl, and always without a key', async () => {
    const app = newApp();
    await kustomizeBuild(manifests, { appName: app, madeFrom: madeFrom('a1') });
    appendFileSync(join(manifests, 'db', 'db-static-overrides.yaml'), 'debug: true\n');
    const changed = await kustomizeBuild(manifests, { appName: app, madeFrom: madeFrom('a2') });
    expect(kubectlRuns()).toBe(2);
    expect(changed).toBe(oracle());
    const later = new Date(Date.now() + 60_000);
    utimesSync(wrapper, later, later);
    await kustomizeBuild(manifests, { appName: app, madeFrom: madeFrom('a2') });
    expect(kubectlRuns()).toBe(3);
    await kustomizeBuild(manifests, { appName: app, madeFrom: undefined });
    await kustomizeBuild(manifests, { appName: app, madeFrom: undefined });
    expect(kubectlRuns()).toBe(5);
  });

  it('never uses an entry it did not seal: a planted one is ignored, said so, and built over', async () => {
    const app = newApp();
    await kustomizeBuild(manifests, { appName: app, madeFrom: madeFrom('a1') });
    // The entry's own first line (kind, input key, seal) over other content: the seal no longer matches.
    const file = join(kustomizeCacheDir(), `app-${createHash('sha256').update(app).digest('hex').slice(0, 32)}`);
    const [header] = readFileSync(file, 'utf8').split('\n');
    writeFileSync(file, `${header}\napiVersion: v1\nkind: Secret\nmetadata:\n  name: planted\n`);
    const notes: string[] = [];
    const built = await kustomizeBuild(manifests, { appName: app, madeFrom: madeFrom('a1'), notes: (note) => notes.push(note) });
    expect(built).toBe(oracle());
    expect(built).not.toContain('planted');
    expect(kubectlRuns()).toBe(2);
    expect(notes.join('\n')).toMatch(/ignored/);
  });
});
