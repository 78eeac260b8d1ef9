/**
 * The version model's rules (src/catalog/model.ts) over the default app's
 * real catalog: what an upload makes available and known, each refusal of
 * `version target` with its message, custom image fields with per-backend
 * maps and an operator-set `default`, and service defaults with the
 * documented fallback and their HelmRelease annotations.
 */
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assembleApp, directoryAppSource, loadApp, type App } from '../../src/app/index.js';
import {
  afterUpload,
  compareOpenStackReleases,
  customImageTarget,
  deployedTarget,
  nextOpenStackRelease,
  retarget,
  VersionRefusedError,
  afterSpecUpload,
  withCustomImage,
  withoutCustomImage,
  withoutDeployed,
  type AppVersions,
} from '../../src/catalog/index.js';
import { writeApp } from '../support/app-fixture.js';

const ROOT = resolve(import.meta.dirname, '../..');
const WHO = { by: 'alice@ops', now: '2026-11-28T05:00:00.000Z' };
const PINNED = 'registry.example/hotfix/cinder@sha256:' + 'a'.repeat(64);

let app: App;
beforeAll(async () => {
  app = await loadApp(ROOT);
});

const uploaded = (): AppVersions => afterUpload(undefined, app.catalog, '25.03-0', '2024.1');
const refusal = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(VersionRefusedError);
    return (error as Error).message;
  }
  throw new Error('not refused');
};

describe('releases', () => {
  it('are ordered by their numbers, and OpenStack names step by its cadence', () => {
    expect(['2025.1', '2023.2', '2024.1', '2024.2'].sort(compareOpenStackReleases)).toEqual(['2023.2', '2024.1', '2024.2', '2025.1']);
    expect(['10.0', '9.1', '9.10'].sort(compareOpenStackReleases)).toEqual(['9.1', '9.10', '10.0']);
    expect(nextOpenStackRelease('2024.1', [])).toBe('2024.2');
    expect(nextOpenStackRelease('2024.2', [])).toBe('2025.1');
    // Other names step to the next known one.
    expect(nextOpenStackRelease('1.0', ['3.0', '2.0'])).toBe('2.0');
  });

  it('an upload makes its catalog available newest first; releases of earlier bundles stay known, marked', () => {
    const older = {
      ...uploaded(),
      available: [
        ...uploaded().available,
        {
          release: '2023.2',
          bundle: '24.09-1',
          inBundle: true,
          images: { keystone_api: 'docker.io/openstackhelm/keystone:2023.2-ubuntu_jammy' },
          serviceDefaults: {},
        },
      ],
    };
    const next = afterUpload(older, app.catalog, '25.03-1', '2025.1');
    expect(next.available.map((a) => [a.release, a.bundle, a.inBundle])).toEqual([
      ['2025.1', '25.03-1', true],
      ['2024.1', '25.03-1', true],
      ['2023.2', '24.09-1', false],
    ]);
    // The catalog entry travels with it, so a known release can still be targeted.
    expect(next.available[0]?.images.glance_api).toBe('docker.io/openstackhelm/glance:2025.1-ubuntu_jammy');
    // Until the operator sets a target it follows the spec's main.release.
    expect(next.target).toBe('2025.1');
    const set = retarget(uploaded(), '2025.1', app.metadata.releaseUpgrades, WHO).versions;
    expect(afterUpload(set, app.catalog, '25.03-2', '2024.1').target).toBe('2025.1');
  });
});

describe('an update whose bundle changes main.release', () => {
  it('moves a target that follows the spec, held to the same rules; one the operator set stays; a removed app has nothing deployed', () => {
    const at2025 = deployedTarget(afterUpload(undefined, app.catalog, '25.03-0', '2025.1'));
    expect(() => afterSpecUpload(at2025, app.catalog, '25.03-1', '2024.1', app.metadata.releaseUpgrades)).toThrow(
      /^bundle 25\.03-1 changes main\.release, and so the target, from 2025\.1 to 2024\.1, which is refused: 2024\.1 is older than 2025\.1: downgrades are refused/,
    );
    const at2024 = deployedTarget(uploaded());
    expect(() => afterSpecUpload(at2024, app.catalog, '25.03-1', '2025.1', { skipLevel: [] })).toThrow(
      /from 2024\.1 to 2025\.1, which is refused: 2024\.1 → 2025\.1 skips releases/,
    );
    const moved = afterSpecUpload(at2024, app.catalog, '25.03-1', '2025.1', app.metadata.releaseUpgrades);
    expect(moved).toMatchObject({ target: '2025.1', deployed: '2024.1' });
    expect(moved.targetSet).toBeUndefined();
    const pinnedByOperator = { ...at2024, targetSet: { at: WHO.now, by: WHO.by } };
    expect(afterSpecUpload(pinnedByOperator, app.catalog, '25.03-1', '2025.1', { skipLevel: [] }).target).toBe('2024.1');
    expect(withoutDeployed({ ...at2024, phase: 'rabbitmq' })).toEqual({ ...uploaded() });
  });
});

describe('version target refuses, saying why and what to do', () => {
  it('a release neither available nor known', () => {
    expect(refusal(() => retarget(uploaded(), '2025.2', app.metadata.releaseUpgrades, WHO))).toMatch(
      /^release "2025.2" is neither available nor known to this app \(did you mean "2025.1"\?\); available: 2025.1, 2024.1\. Upload a bundle whose catalog/,
    );
  });

  it('a downgrade, unless --force, which says so loudly', () => {
    const at2025 = deployedTarget(retarget(uploaded(), '2025.1', app.metadata.releaseUpgrades, WHO).versions);
    expect(refusal(() => retarget(at2025, '2024.1', app.metadata.releaseUpgrades, WHO))).toMatch(
      /^2024\.1 is older than 2025\.1: downgrades are refused .*--force exists for development clusters only$/,
    );
    const forced = retarget(at2025, '2024.1', app.metadata.releaseUpgrades, { ...WHO, force: true });
    expect(forced.versions.target).toBe('2024.1');
    expect(forced.warnings[0]).toMatch(/^DOWNGRADE FORCED: 2025\.1 → 2024\.1\./);
  });

  it('a jump the metadata does not allow; the default app names 2024.1 → 2025.1 as a skip-level jump', () => {
    expect(retarget(uploaded(), '2025.1', app.metadata.releaseUpgrades, WHO).versions.target).toBe('2025.1');
    expect(refusal(() => retarget(uploaded(), '2025.1', { skipLevel: [] }, WHO))).toMatch(
      /^2024\.1 → 2025\.1 skips releases: the app updates one release at a time \(next: 2024\.2\), and its metadata names no skip-level jump from 2024\.1 \(fluxcd\/metadata\.yaml flotilla\.releaseUpgrades\.skipLevel\)\. Target an intermediate release first$/,
    );
  });

  it('a target change while custom images are unchanged since the last target, unless acknowledged', () => {
    const hotfixed = withCustomImage(uploaded(), 'cinder_volume', PINNED, app.catalog, WHO);
    // Set after the target was: a hotfix of the running release, not forgotten yet.
    const moved = retarget(hotfixed, '2025.1', app.metadata.releaseUpgrades, WHO).versions;
    expect(moved.customImagesAtTarget).toEqual({ cinder_volume: PINNED });
    const back = { ...moved, deployed: '2024.1' };
    const again = { ...back, target: '2024.1' };
    expect(refusal(() => retarget(again, '2025.1', app.metadata.releaseUpgrades, WHO))).toMatch(
      /^custom images are set and unchanged since the target was last set \(cinder_volume\): they would stay on top of 2025\.1's images \(a forgotten hotfix\)\. Remove them \(flotilla version image unset APP FIELD\), set ones built for 2025\.1, or keep them with --ack-custom-images$/,
    );
    const acked = retarget(again, '2025.1', app.metadata.releaseUpgrades, { ...WHO, ackCustomImages: true });
    expect(acked.warnings).toEqual(['custom images kept across the target change: cinder_volume']);
    // A custom image changed since the last target is a deliberate choice.
    const rebuilt = withCustomImage(again, 'cinder_volume', PINNED.replace(/a+$/, 'b'.repeat(64)), app.catalog, WHO);
    expect(retarget(rebuilt, '2025.1', app.metadata.releaseUpgrades, WHO).versions.target).toBe('2025.1');
  });
});

describe('custom images', () => {
  it('name a catalog field or FIELD.<backend> of a per-backend map, FIELD.default being every backend without its own', () => {
    expect(customImageTarget('glance_api', app.catalog)).toBe('glance_api');
    expect(customImageTarget('cinder_volume.ceph', app.catalog)).toBe('cinder_volume_ceph');
    expect(customImageTarget('cinder_volume.default', app.catalog)).toBe('cinder_volume');
    expect(refusal(() => customImageTarget('glance-api', app.catalog))).toMatch(
      /^"glance-api" is not an image field of the app \(did you mean "glance_api"\?\)/,
    );
    expect(refusal(() => customImageTarget('cinder_volume.netapp', app.catalog))).toBe(
      'cinder_volume has no backend "netapp": known backends default, lvm, ceph, nfs (a backend without its own image uses cinder_volume.default; a new backend is a cinder_volume_<backend> field in overrides/versions/images.yaml)',
    );
    // glance_api_proxy is a field of its own, not a backend of glance_api.
    expect(refusal(() => customImageTarget('glance_api.proxy', app.catalog))).toBe(
      '"glance_api" has no per-backend images: FIELD.<backend> works for the fields images.yaml lists under backendMaps (cinder_volume)',
    );
  });

  it('are references of the distribution grammar, pinned', () => {
    expect(refusal(() => withCustomImage(uploaded(), 'glance_api', 'Registry.example/UPPER:1', app.catalog, WHO))).toMatch(
      /^custom image glance_api: "Registry.example\/UPPER:1" not a valid image reference/,
    );
    expect(refusal(() => withCustomImage(uploaded(), 'glance_api', 'registry.example/glance', app.catalog, WHO))).toMatch(
      /has no tag or digest; pin every image$/,
    );
    expect(refusal(() => withoutCustomImage(uploaded(), 'glance_api'))).toBe('no custom image is set for glance_api; set: none');
  });

  it('resolve over the target release: a backend map with its fallback, and an operator-set default honoured over the catalog', () => {
    let state = withCustomImage(uploaded(), 'cinder_volume.ceph', PINNED, app.catalog, WHO);
    const defaultImage = 'registry.example/vendor/cinder-volume:2024.1-1@sha256:' + 'c'.repeat(64);
    state = withCustomImage(state, 'cinder_volume.default', defaultImage, app.catalog, WHO);
    for (const release of ['2024.1', '2025.1']) {
      const cluster = assembleApp(directoryAppSource(ROOT), { versions: { ...state, target: release } });
      expect(cluster.target.release).toBe(release);
      expect(cluster.images.get('cinder_volume_ceph')).toMatchObject({ reference: PINNED, source: 'custom' });
      expect(cluster.images.get('cinder_volume_ceph')?.location.file).toBe('custom image cinder_volume.ceph, set 2026-11-28T05:00:00.000Z by alice@ops');
      // The operator's default stays the default whatever the release's catalog says.
      expect(cluster.images.get('cinder_volume')).toMatchObject({ reference: defaultImage, source: 'custom' });
      // Fields without a custom image follow the target release.
      expect(cluster.images.get('glance_api')).toMatchObject({ reference: `docker.io/openstackhelm/glance:${release}-ubuntu_jammy`, source: 'release' });
    }
    const released = assembleApp(directoryAppSource(ROOT), { versions: withoutCustomImage(state, 'cinder_volume.default') });
    expect(released.images.get('cinder_volume')).toMatchObject({ reference: 'docker.io/openstackhelm/cinder:2024.1-ubuntu_jammy', source: 'release' });
  });

  it('a target known only from an earlier bundle resolves from the catalog entry the record kept', () => {
    const state = {
      ...uploaded(),
      available: [
        ...uploaded().available,
        {
          release: '2023.2',
          bundle: '24.09-1',
          inBundle: false,
          images: { glance_api: 'docker.io/openstackhelm/glance:2023.2-ubuntu_jammy' },
          serviceDefaults: { glanceWsgi: false },
        },
      ],
      target: '2023.2',
    };
    const cluster = assembleApp(directoryAppSource(ROOT), { versions: state });
    expect(cluster.images.get('glance_api')).toMatchObject({ reference: 'docker.io/openstackhelm/glance:2023.2-ubuntu_jammy', source: 'release' });
    expect(cluster.images.get('glance_api')?.location.file).toBe('release 2023.2 (known from bundle 24.09-1)');
  });
});

describe('service defaults', () => {
  it('become the annotations of the affected HelmReleases, for both catalog releases', () => {
    const at = (release: string) => assembleApp(directoryAppSource(ROOT), { versions: { ...uploaded(), target: release } });
    expect(at('2024.1').serviceDefaultAnnotations('glance')).toEqual({
      'glance.openstack.org/wsgi': 'false',
      'rabbitmq.openstack.org/transient-quorum-queue': 'false',
    });
    expect(at('2025.1').serviceDefaultAnnotations('glance')).toEqual({
      'glance.openstack.org/wsgi': 'true',
      'rabbitmq.openstack.org/transient-quorum-queue': 'true',
    });
    expect(at('2025.1').serviceDefaultAnnotations('mariadb')).toEqual({ 'mariadb.openstack.org/auto-upgrade': 'true' });
    expect(at('2025.1').serviceDefaultAnnotations('horizon')).toEqual({});
  });

  it('a catalog entry lacking one gets the documented fallback, and says so', async () => {
    const root = writeApp({
      'overrides/versions/2.0.yaml': `release: "2.0"\nimages:\n  web: docker.io/library/nginx:1.27\n  db: docker.io/library/mariadb:11.4\n`,
      'overrides/service-defaults.yaml': `modern:\n  fallback: false\n  annotation: web.example.org/modern\n  charts: [web]\n`,
    });
    const demo = await loadApp(root);
    expect(demo.serviceDefaults.get('modern')).toEqual({ value: false, source: 'fallback' });
    expect(demo.target.serviceDefaults).toEqual({ modern: false });
    expect(demo.serviceDefaultAnnotations('web')).toEqual({ 'web.example.org/modern': 'false' });
    const one = assembleApp(directoryAppSource(root), { versions: { ...afterUpload(undefined, demo.catalog, '1.0-1', '2.0'), target: '1.0' } });
    expect(one.serviceDefaults.get('modern')).toEqual({ value: false, source: 'release' });
  });

  it("once declared, a release's undeclared service default is a warning at its line", async () => {
    const demo = await loadApp(writeApp({ 'overrides/service-defaults.yaml': `other:\n  fallback: 1\n` }));
    expect(demo.warnings.map((w) => `${w.location?.file}:${w.location?.line}: ${w.message}`)).toEqual([
      'overrides/versions/1.0.yaml:6: serviceDefaults.modern of release 1.0 is not declared in overrides/service-defaults.yaml: a release lacking it gets no fallback, and no HelmRelease is annotated with it',
      'overrides/versions/2.0.yaml:6: serviceDefaults.modern of release 2.0 is not declared in overrides/service-defaults.yaml: a release lacking it gets no fallback, and no HelmRelease is annotated with it',
    ]);
    expect(demo.serviceDefaults.get('other')).toEqual({ value: 1, source: 'fallback' });
  });

  it('a declaration that is not one is refused at its line', async () => {
    await expect(
      loadApp(writeApp({ 'overrides/service-defaults.yaml': `modern:\n  fallback: [1]\n  annotation: "not a key!"\n  charts: [web]\n` })),
    ).rejects.toThrow(
      /overrides\/service-defaults\.yaml:2:\d+: error: service default modern: "fallback" must be a boolean, number or string[\s\S]*overrides\/service-defaults\.yaml:3:\d+: error: service default modern: "annotation" must be an annotation key/,
    );
  });
});

describe('the version state read back from the cluster', () => {
  it('is held to what flotilla writes: a tampered field is named', async () => {
    const { decodeRecord, encodeRecord } = await import('../../src/lifecycle/record.js');
    const record = {
      name: 'demo',
      state: 'uploaded' as const,
      bundle: {
        version: '1.0-1',
        sha256: 'a'.repeat(64),
        source: 'demo-1.0-1.tgz',
        payload: 'flotilla-bundle-demo-1.0-1',
        charts: [],
        releases: [],
        repository: { url: 'oci://127.0.0.1:5000/charts', type: 'oci' as const },
        maintainUserOverrides: true,
        updateFailureNoRollback: false,
        fromVersions: [],
        applyProgressAdjust: 0,
        uploaded: WHO.now,
      },
      userOverrides: {},
      deployed: [],
      history: [],
      versions: withCustomImage(uploaded(), 'glance_api', PINNED, app.catalog, WHO),
    };
    expect(decodeRecord(encodeRecord(record), 'Secret x').versions?.customImages.glance_api?.reference).toBe(PINNED);
    const tampered = { ...record, versions: { ...record.versions, customImages: { glance_api: { reference: 42, set: WHO.now, by: WHO.by } } } };
    expect(() => decodeRecord(encodeRecord(tampered as never), 'Secret x')).toThrow(
      "Secret x: the app record's versions.customImages.glance_api.reference is missing or invalid (expected a string)",
    );
    const noTarget = { ...record, versions: { ...record.versions, target: undefined } };
    expect(() => decodeRecord(encodeRecord(noTarget as never), 'Secret x')).toThrow("the app record's versions.target is missing or invalid");
  });
});
