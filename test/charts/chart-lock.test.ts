/**
 * Chart.lock's digest as Helm computes it (resolver.HashReq): every lock of
 * the corpus (../shared/corpus, written by `helm dependency update` for
 * Bitnami's charts: ranges, tags, conditions, four aliases of one chart)
 * matches the digest flotilla computes for its Chart.yaml, and a lock for
 * other dependencies than Chart.yaml declares is refused, naming its line.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockDigest, lockedVersions, parseChartLock, parseChartYaml } from '../../src/charts/index.js';
import { CORPUS } from '../support/corpus-app.js';

if (!CORPUS) console.log('chart-lock: ../shared/corpus is absent; the corpus locks are not checked');

describe('Chart.lock', () => {
  it.skipIf(!CORPUS)('gives every corpus lock the digest helm dependency update wrote', () => {
    const charts = readdirSync(CORPUS!).filter((name) => existsSync(join(CORPUS!, name, 'Chart.lock')));
    expect(charts.length).toBeGreaterThan(100);
    const wrong = charts.filter((name) => {
      const { dependencies } = parseChartYaml(readFileSync(join(CORPUS!, name, 'Chart.yaml'), 'utf8'), `${name}/Chart.yaml`);
      const lock = parseChartLock(readFileSync(join(CORPUS!, name, 'Chart.lock'), 'utf8'), `${name}/Chart.lock`);
      return lockDigest(dependencies, lock.dependencies) !== lock.digest;
    });
    expect(wrong).toEqual([]);
  });

  it('refuses a lock out of sync with Chart.yaml at the line of its digest', () => {
    const { dependencies } = parseChartYaml('apiVersion: v2\nname: web\nversion: 1.0.0\ndependencies:\n  - name: common\n    version: 2.x.x\n    repository: https://charts.example.org\n', 'Chart.yaml');
    const locked = [{ name: 'common', repository: 'https://charts.example.org', version: '2.1.0' }];
    const text = (digest: string) => `dependencies:\n- name: common\n  repository: https://charts.example.org\n  version: 2.1.0\ndigest: ${digest}\ngenerated: "2026-01-01T00:00:00Z"\n`;
    expect(lockedVersions(dependencies, parseChartLock(text(lockDigest(dependencies, locked)), 'Chart.lock'))).toEqual(locked);
    const stale = lockDigest([{ ...dependencies[0]!, version: '1.x.x' }], locked);
    expect(() => lockedVersions(dependencies, parseChartLock(text(stale), 'Chart.lock'))).toThrow(/^Chart\.lock:5:1: out of sync with the dependencies of Chart\.yaml/);
  });
});
