import { describe, expect, it } from 'vitest';
import { isReady, readHelmRelease, readyCondition } from '../../src/flux/index.js';

const doc = (extra: Record<string, unknown> = {}) => ({
  apiVersion: 'helm.toolkit.fluxcd.io/v2',
  kind: 'HelmRelease',
  metadata: { name: 'keystone', namespace: 'openstack', generation: 3, labels: { chart_group: 'identity', bad: 7 } },
  spec: {
    releaseName: 'osh-openstack-keystone',
    chart: { spec: { chart: 'keystone', version: 2025.1, sourceRef: { kind: 'HelmRepository', name: 'stx-platform' } } },
    interval: '1m',
    dependsOn: [{ name: 'mariadb', namespace: 'openstack' }, { nameless: true }],
    valuesFrom: [{ kind: 'Secret', name: 'keystone-static-overrides', valuesKey: 'keystone-static-overrides.yaml' }],
    driftDetection: { mode: 'warn' },
  },
  ...extra,
});

describe('the HelmRelease type', () => {
  it('reads the fields flotilla uses, keeping only those of the right type', () => {
    const hr = readHelmRelease(doc())!;
    expect(hr.metadata).toEqual({ name: 'keystone', namespace: 'openstack', generation: 3, labels: { chart_group: 'identity' } });
    expect(hr.spec.chart?.spec).toMatchObject({ chart: 'keystone', version: '2025.1', sourceRef: { kind: 'HelmRepository', name: 'stx-platform' } });
    expect(hr.spec.dependsOn).toEqual([{ name: 'mariadb', namespace: 'openstack' }]);
    expect(hr.spec.driftDetection).toEqual({ mode: 'warn' });
    expect(readHelmRelease({ kind: 'HelmRepository' })).toBeUndefined();
    expect(readHelmRelease('text')).toBeUndefined();
  });

  it('is Ready only when Flux says so for the current generation', () => {
    const ready = (status: string, observedGeneration: number) => readHelmRelease(doc({ status: { observedGeneration, conditions: [{ type: 'Ready', status, reason: 'InstallSucceeded' }] } }))!;
    expect(readyCondition(ready('True', 3))).toMatchObject({ type: 'Ready', status: 'True', reason: 'InstallSucceeded' });
    expect(isReady(ready('True', 3))).toBe(true);
    expect(isReady(ready('True', 2))).toBe(false); // Ready for the spec before the last change
    expect(isReady(ready('False', 3))).toBe(false);
    expect(isReady(readHelmRelease(doc())!)).toBe(false);
  });
});
