import { describe, expect, it } from 'vitest';
import { testLifecycleContext } from 'flotilla/plugin';
import OpenStackLifecycle from '../../plugins/001_lifecycle.js';

const check = (features: Record<string, unknown>) =>
  new OpenStackLifecycle().checkStorage(testLifecycleContext('apply', 'pre', 'check', { spec: { features } }));

describe('plugin 001_lifecycle', () => {
  it('lets an apply go on when the storage features fit together', () => {
    expect(check({ cinder: { backends: { ceph: {}, lvm: {} } }, glance: { storage: 'rbd' } })).toBeUndefined();
    expect(check({ cinder: { backends: { 'fast-ceph': { type: 'ceph', options: {} } } }, glance: { storage: 'rbd' } })).toBeUndefined();
    expect(check({})).toBeUndefined();
  });

  it('refuses images in Ceph without a Ceph backend', () => {
    expect(check({ cinder: { backends: { lvm: {} } }, glance: { storage: 'rbd' } })).toEqual({
      refused: true,
      reason:
        'features.glance.storage is rbd, but features.cinder.backends has no ceph backend to take the Ceph client settings from; add one (ceph: {}) or use storage: file',
    });
  });

  it('refuses an NFS backend without shares', () => {
    expect(check({ cinder: { backends: { nfs: {} } } })).toMatchObject({
      reason: expect.stringContaining('features.cinder.backends.nfs is an NFS backend without shares'),
    });
  });

  it('runs the check before apply and update', () => {
    const hooks = new OpenStackLifecycle().hooks;
    expect(typeof hooks.apply?.pre?.check).toBe('function');
    expect(typeof hooks.update?.pre?.check).toBe('function');
  });
});
