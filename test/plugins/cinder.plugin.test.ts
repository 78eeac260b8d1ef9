import { describe, expect, it } from 'vitest';
import { testChartContext } from 'flotilla/plugin';
import CinderPlugin from '../../plugins/050_cinder.js';

const ctx = (backends: Record<string, unknown>, images: Record<string, string>) =>
  testChartContext('cinder', { version: { release: '2025.1', images }, spec: { features: { cinder: { backends } } } });

describe('plugin 050_cinder', () => {
  it('gives every backend its own volume image, else the default cinder_volume', async () => {
    const values = await new CinderPlugin().getOverrides(
      ctx(
        { lvm: {}, ceph: {}, 'vendor-san': { type: 'other', options: {} } },
        { cinder_volume: 'example.org/cinder:2025.1', cinder_volume_vendor_san: 'vendor.example.org/cinder-san:2025.1' },
      ),
    );
    expect(values.images).toEqual({
      tags: {
        cinder_volume_ceph: 'example.org/cinder:2025.1',
        cinder_volume_lvm: 'example.org/cinder:2025.1',
        cinder_volume_vendor_san: 'vendor.example.org/cinder-san:2025.1',
      },
    });
  });

  it('sets no images without backends, and fails when a backend has no image at all', async () => {
    expect((await new CinderPlugin().getOverrides(ctx({}, { cinder_volume: 'example.org/cinder:1' }))).images).toBeUndefined();
    await expect(new CinderPlugin().getOverrides(ctx({ lvm: {} }, {}))).rejects.toThrow(
      'no image for cinder backend lvm: the release 2025.1 defines neither cinder_volume_lvm nor cinder_volume',
    );
  });
});
