/**
 * docs/first-app.md, run as written: every `sh` block of the page, in order,
 * by /bin/sh in an empty folder, with `flotilla`, `helm`, `npm` and
 * `openssl` on PATH, `REGISTRY` a local Debian docker-registry holding the
 * front end's image, and `KUBECONFIG` the dev cluster. Two commands cannot
 * reach the network here and are stood in for on PATH, saying so: `helm
 * pull` copies the corpus chart it names (../shared/corpus/bitnami, its
 * `common` dependency vendored as `helm pull --untar` leaves it), and `npm
 * install` links flotilla, vitest and TypeScript from this checkout as npm
 * would install them. Everything else is the real tool. The test skips, with
 * a line saying so, when the corpus is absent.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaType, OciClient, parseReference } from '../../src/oci/index.js';
import { toolPath } from '../../src/tools/index.js';
import { tempDir } from '../support/app-fixture.js';
import { CORPUS, vendorCorpusChart } from '../support/corpus-app.js';
import { startDevCluster, type DevCluster } from '../support/dev-cluster/index.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const PAGE = join(REPO, 'docs', 'first-app.md');

/** The page's `sh` blocks, in order, each with the heading it sits under. */
function shellBlocks(markdown: string): { heading: string; script: string }[] {
  const blocks: { heading: string; script: string }[] = [];
  let heading = '';
  for (const part of markdown.split(/^```/m).map((text, i) => ({ text, code: i % 2 === 1 }))) {
    if (!part.code) {
      heading = [...part.text.matchAll(/^#+ (.*)$/gm)].at(-1)?.[1] ?? heading;
      continue;
    }
    const [language = '', ...lines] = part.text.split('\n');
    if (language.trim() === 'sh') blocks.push({ heading, script: lines.join('\n') });
  }
  return blocks;
}

interface BlockRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

if (!CORPUS) console.log('test/init/walkthrough.test.ts: skipped, ../shared/corpus/bitnami is absent (the walkthrough pulls two of its charts)');

describe.skipIf(!CORPUS)('docs/first-app.md, run as written', () => {
  let cluster: DevCluster;
  let work: string;
  let cwd: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    work = tempDir('flotilla-walkthrough-');
    cluster = await startDevCluster({ requeueDependencyMs: 250 });
    const registry = cluster.registry?.host ?? '';
    await pushImage(`${registry}/shop/web:1.0`);
    // What `helm pull --untar` would fetch: the corpus charts, their dependencies vendored below them.
    const pulled = join(work, '.pulled');
    for (const chart of ['memcached', 'redis']) vendorCorpusChart(CORPUS as string, chart, join(pulled, chart));
    const bin = join(work, '.bin');
    mkdirSync(bin);
    const script = (name: string, text: string) => {
      writeFileSync(join(bin, name), `#!/bin/sh\n${text}`);
      chmodSync(join(bin, name), 0o755);
    };
    script('flotilla', `exec "${process.execPath}" "${join(REPO, 'dist', 'cli', 'flotilla.cjs')}" "$@"\n`);
    script(
      'helm',
      `if [ "$1" = pull ]; then\n  echo "(test) helm pull $2: copied from the corpus" >&2\n  cp -R "${pulled}/$(basename "$2")" .\n  exit 0\nfi\nexec "${toolPath('helm')}" "$@"\n`,
    );
    script(
      'npm',
      `if [ "$1" = install ]; then\n  echo "(test) npm install: linked from ${REPO}" >&2\n  mkdir -p node_modules/.bin\n  ln -s "${REPO}" node_modules/flotilla\n` +
        `  ln -s "${REPO}/node_modules/vitest" node_modules/vitest\n  ln -s "${REPO}/node_modules/typescript" node_modules/typescript\n  ln -s ../vitest/vitest.mjs node_modules/.bin/vitest\n  exit 0\nfi\n` +
        `PATH="$(echo "$PATH" | sed "s#^${bin}:##")" exec npm "$@"\n`,
    );
    // A fresh environment for the nested vitest `npm test` runs (none of this one's own variables).
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_OPTIONS' && k !== 'TEST'));
    env = {
      ...inherited,
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      REGISTRY: registry,
      KUBECONFIG: cluster.kubeconfigPath,
      FLOTILLA_BUILD_SERVER: '0',
      FLOTILLA_STATE_DIR: join(work, '.state'),
    };
    cwd = work;
  }, 240_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  async function pushImage(reference: string): Promise<void> {
    const client = new OciClient({ credentials: { credentialFor: () => undefined } });
    const repo = parseReference(reference);
    const json = (value: unknown) => Buffer.from(JSON.stringify(value));
    const config = await client.pushBlob(repo, json({ architecture: 'amd64', os: 'linux' }), 'application/vnd.oci.image.config.v1+json');
    const layer = await client.pushBlob(repo, Buffer.from('the front end'), 'application/vnd.oci.image.layer.v1.tar+gzip');
    await client.pushManifest(repo, json({ schemaVersion: 2, mediaType: MediaType.ociManifest, config, layers: [layer] }), MediaType.ociManifest);
  }

  /** One block by /bin/sh -e from where the last one left off (a `cd` in it carries over), its output captured. */
  function runBlock(script: string): Promise<BlockRun> {
    const where = join(work, '.pwd');
    return new Promise((done) => {
      execFile('/bin/sh', ['-ec', `cd "${cwd}"\n${script}\npwd > "${where}"`], { env, maxBuffer: 1 << 26 }, (error, stdout, stderr) => {
        if (!error) cwd = readFileSync(where, 'utf8').trim();
        done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      });
    });
  }

  it('reaches an applied app, updates and removes it, from an empty folder', async () => {
    const blocks = shellBlocks(readFileSync(PAGE, 'utf8'));
    expect(blocks.map((b) => b.heading)).toEqual([
      '1. Create the app',
      '2. Values that ship with the app',
      '3. Images, pinned',
      '4. A plugin computing values, with its test',
      '5. Build, sign, verify',
      '6. The lifecycle',
    ]);
    const ran: BlockRun[] = [];
    for (const [i, block] of blocks.entries()) {
      const run = await runBlock(block.script);
      ran.push(run);
      expect(run.code, `${block.heading}:\n${run.stdout}\n${run.stderr}`).toBe(0);
      const app = join(work, 'shop');
      switch (i) {
        case 0:
          expect(run.stdout).toMatch(/^1\s+web\s+web\s+web\s+-\s+shop\s+web\s+-\s+yes$/m);
          expect(run.stdout).toMatch(/^1\s+redis\s+redis\s+/m);
          expect(run.stdout).toContain('3 releases in 1 waves; 3 enabled by the spec');
          break;
        case 1:
          expect(readFileSync(join(app, 'overrides/static/redis.yaml'), 'utf8')).toContain('architecture: standalone');
          expect(run.stdout).toMatch(/all 3 releases render/);
          break;
        case 2: {
          const pinned = readFileSync(join(app, 'overrides/versions/v1.yaml'), 'utf8');
          expect(pinned).toMatch(new RegExp(`web: ${env.REGISTRY}/shop/web:1\\.0@sha256:[0-9a-f]{64}`));
          expect(run.stdout).toMatch(/lands: web image\.repository \+ image\.tag/);
          break;
        }
        case 3:
          expect(`${run.stdout}${run.stderr}`).toMatch(/1 passed/);
          expect(run.stdout).toContain('plugins/ type-checks');
          expect(run.stdout).toMatch(/podAnnotations:\n\s+shop\.example\/version: 0\.1\.0-1/);
          expect(run.stdout).toMatch(/repository: 127\.0\.0\.1:\d+\/shop\/web\n\s+tag: 1\.0@sha256:/);
          break;
        case 4:
          expect(run.stdout).toMatch(/out\/shop-0\.1\.0-1\.tgz: signed/);
          expect(run.stdout).toMatch(/out\/shop-0\.1\.0-1\.tgz: verified/);
          expect(run.stderr).not.toMatch(/StarlingX/);
          break;
        case 5:
          expect(run.stdout).toContain('shop 0.1.0-1: applied');
          expect(run.stdout).toContain('shop 0.1.0-2: applied');
          expect(run.stdout).toMatch(/release shop\/web: changed/);
          expect(run.stdout).toMatch(/~ replicaCount: 2 → 3/);
          expect(run.stdout).toContain('shop: deleted');
          break;
      }
    }
  }, 900_000);
});
