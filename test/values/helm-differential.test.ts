/**
 * Helm's values semantics, proven against Helm: random values trees (maps,
 * lists, scalars, nulls at every depth; keys shared so kinds clash) for the
 * chart's values.yaml and four layers above it, computed by flotilla's
 * layering (computeReleaseValues) and rendered by the real `helm template`
 * with the layers as `-f` files in the same order; the final values must be
 * equal, and the warnings Helm prints must be the clashes flotilla reports
 * with Helm's warning. Cases are batched: each is one top-level key (so the
 * key itself meets Helm's top-level rules and everything below it the nested
 * ones), hundreds per helm run, two runs at a time. Seeded
 * (FLOTILLA_DIFF_SEED, FLOTILLA_DIFF_CASES).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatPath } from '../../src/diagnostics/index.js';
import { dumpYaml, parseYaml, toPlain, type PlainValue } from '../../src/yaml/index.js';
import { computeReleaseValues, type ReleaseInfo, type ValuesSource } from '../../src/values/index.js';
import { seededRandom } from '../support/random.js';

const CASES = Number(process.env.FLOTILLA_DIFF_CASES ?? 3000);
const SEED = Number(process.env.FLOTILLA_DIFF_SEED ?? 20261128);
const PER_RUN = 500;
const helmBin = process.env.FLOTILLA_HELM ?? 'helm';
const run = promisify(execFile);

/** The layers above the chart, in flotilla's order; each is one `-f` file for Helm, in the same order. */
const LAYERS = ['static', 'plugin', 'user', 'command-line'] as const;
type Layers = Record<(typeof LAYERS)[number] | 'chart', { [key: string]: PlainValue }>;

function generator(random: () => number) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const scalar = (): PlainValue =>
    pick<() => PlainValue>([() => Math.floor(random() * 5), () => pick(['x', 'y', 'on', '']), () => random() < 0.5, () => null])();
  const value = (depth: number): PlainValue => {
    const roll = random();
    if (depth < 3 && roll < 0.45) return map(depth + 1);
    if (roll < 0.6) return Array.from({ length: Math.floor(random() * 3) }, () => (random() < 0.3 && depth < 3 ? map(depth + 1) : scalar()));
    return scalar();
  };
  const map = (depth: number): { [key: string]: PlainValue } => {
    const out: { [key: string]: PlainValue } = {};
    // Few key names, so layers meet at the same paths with other kinds.
    for (const key of ['a', 'b', 'c']) if (random() < 0.55) out[key] = value(depth);
    return out;
  };
  return { value, present: () => random() < 0.7 };
}

/** Each case a top-level key `c<i>`, absent from a layer at random. */
function generate(first: number, count: number, random: () => number): Layers {
  const gen = generator(random);
  const layers: Layers = { chart: {}, static: {}, plugin: {}, user: {}, 'command-line': {} };
  for (let i = first; i < first + count; i++) {
    for (const layer of ['chart', ...LAYERS] as const) if (gen.present()) layers[layer][`c${i}`] = gen.value(0);
  }
  return layers;
}

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'flotilla-helm-values-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const TEMPLATE = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: values\ndata:\n  values: {{ toJson .Values | quote }}\n';

/** `helm template` of a chart whose values.yaml is the chart layer, with the other layers as -f files. */
async function helmValues(dir: string, layers: Layers): Promise<{ values: Record<string, PlainValue>; warnings: Set<string> }> {
  mkdirSync(join(dir, 'chart', 'templates'), { recursive: true });
  writeFileSync(join(dir, 'chart', 'Chart.yaml'), 'apiVersion: v2\nname: diff\nversion: 0.1.0\n');
  writeFileSync(join(dir, 'chart', 'values.yaml'), dumpYaml(layers.chart));
  writeFileSync(join(dir, 'chart', 'templates', 'values.yaml'), TEMPLATE);
  const files = LAYERS.map((layer) => {
    writeFileSync(join(dir, `${layer}.yaml`), dumpYaml(layers[layer]));
    return ['-f', join(dir, `${layer}.yaml`)];
  });
  const { stdout, stderr } = await run(helmBin, ['template', 'diff', join(dir, 'chart'), ...files.flat()], { maxBuffer: 256 * 1024 * 1024 });
  const manifest = parseYaml(stdout, 'helm-output', { layer: 'helm' }).root;
  const data = toPlain(manifest!) as { data: { values: string } };
  const warnings = new Set<string>();
  for (const match of stderr.matchAll(/warning: (skipped value for|cannot overwrite table with non table for|destination for) (diff\.[^\s:]+)/g)) {
    const kind = match[1] === 'skipped value for' ? 'skipped' : match[1] === 'destination for' ? 'destination' : 'overwrite';
    warnings.add(`${kind} ${(match[2] as string).slice('diff.'.length)}`);
  }
  return { values: JSON.parse(data.data.values) as Record<string, PlainValue>, warnings };
}

/** The same layers through flotilla's values engine: chart values.yaml, static overrides, then three provider layers. */
async function flotillaValues(layers: Layers): Promise<{ values: Record<string, PlainValue>; warnings: Set<string> }> {
  const release: ReleaseInfo = { name: 'diff', chart: 'diff', chartPath: 'charts/diff', namespace: 'default', releaseName: 'diff' };
  const parsed = (layer: keyof Layers) => parseYaml(dumpYaml(layers[layer]), `${layer}.yaml`, { layer }).root;
  const source: ValuesSource = {
    readText: (path) => (path === 'overrides/static/diff.yaml' ? dumpYaml(layers.static) : undefined),
    chartFile: (_release, file) => (file === 'values.yaml' ? { text: dumpYaml(layers.chart), file: 'charts/diff/values.yaml' } : undefined),
    metadata: { appName: 'diff', appVersion: '1' },
    spec: { main: {}, features: {} },
    specNode: undefined,
    target: { release: 'r', file: 'versions.yaml', images: new Map(), serviceDefaults: {} },
    catalog: { targets: new Map() },
    images: new Map(),
  };
  const values = await computeReleaseValues(source, release, {
    plugin: () => Promise.resolve(parsed('plugin')),
    user: () => Promise.resolve(parsed('user')),
    commandLine: () => Promise.resolve(parsed('command-line')),
  });
  const warnings = new Set(values.clashes.filter((c) => c.helm).map((c) => `${c.helm} ${formatPath(c.path)}`));
  return { values: (values.merged ? toPlain(values.merged) : {}) as Record<string, PlainValue>, warnings };
}

describe(`values layering equals helm template's (${CASES} cases, seed ${SEED})`, () => {
  it('final values and Helm warnings', async () => {
    const runs = Array.from({ length: Math.ceil(CASES / PER_RUN) }, (_, r) => r);
    const random = seededRandom(SEED);
    const batches = runs.map((r) => generate(r * PER_RUN, Math.min(PER_RUN, CASES - r * PER_RUN), random));
    let warned = 0;
    let compared = 0;
    // Two helm runs at a time (the machine has two cores).
    for (let r = 0; r < runs.length; r += 2) {
      const pair = batches.slice(r, r + 2);
      const helm = await Promise.all(pair.map((layers, i) => helmValues(join(work, `run-${r + i}`), layers)));
      for (const [i, layers] of pair.entries()) {
        const ours = await flotillaValues(layers);
        const theirs = helm[i]!;
        for (const key of new Set([...Object.keys(ours.values), ...Object.keys(theirs.values)])) {
          const replay = `case ${key} (seed ${SEED}): ${JSON.stringify(Object.fromEntries((['chart', ...LAYERS] as const).map((l) => [l, layers[l][key]])))}`;
          expect(ours.values[key], replay).toEqual(theirs.values[key]);
          compared++;
        }
        const forKey = (set: Set<string>, key: string) => [...set].filter((w) => w.split(' ')[1]!.split(/[.[]/)[0] === key).sort();
        for (let c = (r + i) * PER_RUN; c < (r + i + 1) * PER_RUN && c < CASES; c++) {
          const key = `c${c}`;
          const helmWarnings = forKey(theirs.warnings, key);
          if (helmWarnings.length > 0) warned++;
          expect(forKey(ours.warnings, key), `warnings of ${key} (seed ${SEED})`).toEqual(helmWarnings);
        }
      }
    }
    expect(compared).toBeGreaterThan(CASES / 2);
    // The generator must reach Helm's warnings often, or the kind rule is not tested.
    expect(warned).toBeGreaterThan(CASES / 20);
  }, 300_000);
});
