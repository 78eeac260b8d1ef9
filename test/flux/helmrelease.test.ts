import { describe, expect, it } from 'vitest';
import { condition, readHelmRelease } from '../../src/flux/index.js';

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

  it('reads a condition by type', () => {
    const hr = readHelmRelease(
      doc({
        status: {
          conditions: [
            { type: 'Ready', status: 'False', reason: 'UpgradeFailed' },
            { type: 'Released', status: 'False', reason: 'UpgradeFailed' },
            { type: 'Bogus' },
          ],
        },
      }),
    )!;
    expect(condition(hr, 'Released')).toMatchObject({ type: 'Released', status: 'False', reason: 'UpgradeFailed' });
    expect(condition(hr, 'Stalled')).toBeUndefined();
    expect(condition(hr, 'Bogus')).toBeUndefined(); // no status: not a condition
  });
});
