/** Test helpers: temporary app trees and policies built from inline YAML. */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import type { Output } from '../../src/cli/output.js';
import { parseYamlText, policyLayersAt, resolvePolicy, type EffectivePolicy, type LayerKind, type PolicyLayer } from '../../src/policies/index.js';

const roots: string[] = [];

/** Writes `files` (relative path → content) under a fresh temporary folder, removed after the test. */
export function writeTree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'flotilla-policies-'));
  roots.push(root);
  for (const [path, content] of Object.entries(files)) {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  return root;
}

/**
 * A minimal but complete app around the given files: metadata, a release
 * per chart (named like the chart, all enabled) and a version catalog.
 */
export function writeAppTree(files: Record<string, string>, charts: readonly string[], features = ''): string {
  return writeTree({
    'fluxcd/metadata.yaml': 'app_name: policy-test\napp_version: "1"\nsupported_k8s_version: {minimum: v1.29}\n',
    'fluxcd/releases.yaml': `releases:\n${charts.map((c) => `  - {name: ${c}, chart: ${c}, service: ${c}}\n`).join('')}`,
    'overrides/versions/2025.1.yaml': 'release: "2025.1"\nimages: {}\n',
    'overrides/deployment.yaml': `main:\n  release: "2025.1"\nfeatures:\n  services: [${charts.join(', ')}]\n${features}`,
    ...Object.fromEntries(charts.map((c) => [`charts/${c}/Chart.yaml`, `apiVersion: v2\nname: ${c}\nversion: 0.1.0\n`])),
    ...files,
  });
}

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** One layer from inline YAML holding `conf.policy` (or, with `bare`, rules at the top level). */
export function layer(yaml: string, options: { file?: string; label?: string; kind?: LayerKind; bare?: boolean } = {}): PolicyLayer {
  const doc = parseYamlText(options.file ?? 'policy.yaml', yaml);
  const layers = policyLayersAt(doc, options.bare ? [] : ['conf', 'policy'], {
    label: options.label ?? options.file ?? 'policy.yaml',
    kind: options.kind ?? 'override',
  });
  const [only] = layers ?? [];
  if (!only || (layers?.length ?? 0) !== 1) throw new Error('expected exactly one layer');
  return only;
}

/** A policy from a map of rule name → rule text (one bare layer). */
export function policyOf(rules: Record<string, string>, file = 'policy.yaml'): EffectivePolicy {
  const yaml = Object.entries(rules)
    .map(([name, text]) => `${JSON.stringify(name)}: ${JSON.stringify(text)}`)
    .join('\n');
  return resolvePolicy([layer(yaml, { file, bare: true })]);
}

/** An Output that keeps what a policy command prints. */
export function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l) };
}
