/**
 * An image field landing as `repository` + `tag` (+ `digest`) paths, as
 * `helm create`'s chart and most public charts take an image: checked by
 * rendering helm create's own chart with the real `helm template`.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadAll } from 'js-yaml';
import { toolPath } from '../../src/tools/index.js';
import { imageLandings } from '../../src/values/index.js';
import { tempDir } from '../support/app-fixture.js';

const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'flotilla.cjs');
const flotilla = (...args: string[]) =>
  run(process.execPath, [cli, ...args], { env: { ...process.env, FLOTILLA_BUILD_SERVER: '0' }, maxBuffer: 1 << 24 }).then(
    (r) => ({ ...r, code: 0 }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
const DIGEST = `sha256:${'a1'.repeat(32)}`;

describe('an image field landing as repository + tag', () => {
  let app: string;
  beforeAll(async () => {
    const work = tempDir('flotilla-image-split-');
    await run(toolPath('helm'), ['create', join(work, 'web')]);
    app = join(work, 'shop');
    const made = await flotilla('init', app, '--chart', join(work, 'web'), '--target', 'flux');
    expect(made.code, made.stderr).toBe(0);
    mkdirSync(join(app, 'overrides/versions'));
    writeFileSync(join(app, 'overrides/versions/v1.yaml'), `release: v1\nimages:\n  web: registry.example:5000/shop/nginx:1.27@${DIGEST}\n`, { flag: 'w' });
  }, 60_000);

  const containerImage = (manifest: string): string | undefined => {
    const deployment = (loadAll(manifest) as { kind?: string; spec?: { template: { spec: { containers: { image: string }[] } } } }[]).find(
      (doc) => doc?.kind === 'Deployment',
    );
    return deployment?.spec?.template.spec.containers[0]?.image;
  };

  it("gives helm create's chart the pinned reference through image.repository and image.tag", async () => {
    writeFileSync(join(app, 'overrides/versions/images.yaml'), 'web:\n  web: {repository: image.repository, tag: image.tag}\n');
    writeFileSync(join(app, 'overrides/deployment.yaml'), 'main:\n  release: v1\nfeatures:\n  services: [web]\n');
    const values = await flotilla('overrides', app, 'web', '-o', 'json');
    expect(values.code, values.stderr).toBe(0);
    expect((JSON.parse(values.stdout) as { values: { image: unknown } }).values.image).toEqual({
      repository: 'registry.example:5000/shop/nginx',
      tag: `1.27@${DIGEST}`,
    });
    const rendered = await flotilla('template', app, 'web');
    expect(rendered.code, rendered.stderr).toBe(0);
    expect(containerImage(rendered.stdout)).toBe(`registry.example:5000/shop/nginx:1.27@${DIGEST}`);
    const listed = await flotilla('images', 'list', app);
    expect(listed.stdout).toMatch(/lands: web image\.repository \+ image\.tag\s/);
  }, 60_000);

  it('writes the digest at its own path when the chart has one', () => {
    expect(imageLandings(`nginx:1.27@${DIGEST}`, { path: ['image', 'repository'], split: { tag: ['image', 'tag'], digest: ['image', 'digest'] } })).toEqual([
      { path: ['image', 'repository'], value: 'nginx' },
      { path: ['image', 'tag'], value: '1.27' },
      { path: ['image', 'digest'], value: DIGEST },
    ]);
    expect(imageLandings('127.0.0.1:5000/a/b:2', { path: ['image', 'repository'], split: { tag: ['image', 'tag'] } })).toEqual([
      { path: ['image', 'repository'], value: '127.0.0.1:5000/a/b' },
      { path: ['image', 'tag'], value: '2' },
    ]);
  });

  it('refuses a landing map without a tag path, naming the file, line and the expected form', async () => {
    writeFileSync(join(app, 'overrides/versions/images.yaml'), 'web:\n  web: {repository: image.repository}\n');
    const refused = await flotilla('releases', app);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /overrides\/versions\/images\.yaml:2:\d+: error: image field web → chart web: expected .*\{repository: image\.repository, tag: image\.tag, digest: image\.digest\} \(digest optional\); repository and tag are required/,
    );
  });
});
