/**
 * The text of the files the import generates (everything but the files it
 * copies byte for byte): the release table, fluxcd/build.yaml, a minimal
 * deployment spec and the version catalog. YAML goes through flotilla's one
 * writer (dumpYaml), which quotes strings YAML 1.1 readers would retype.
 */
import { dumpYaml } from '../yaml/index.js';
import { FLUX_DEFAULT_INTERVAL, FLUX_DEFAULT_TIMEOUT } from '../names/index.js';
import { actionFlagsPlain } from './releases.js';
import type { HarvestedImage, ImportedRelease, SkippedImage, StxManifests } from './types.js';
import { formatLocation } from '../diagnostics/index.js';

const comment = (lines: readonly string[]): string => lines.map((l) => (l === '' ? '#' : `# ${l}`)).join('\n') + '\n';

/** The value most releases share (ties: the first release's), or undefined when there are no values. */
function mostCommon<T>(values: readonly T[], key: (v: T) => string = (v) => JSON.stringify(v)): T | undefined {
  const counts = new Map<string, { value: T; count: number }>();
  for (const v of values) {
    const k = key(v);
    const entry = counts.get(k);
    if (entry) entry.count++;
    else counts.set(k, { value: v, count: 1 });
  }
  let best: { value: T; count: number } | undefined;
  for (const entry of counts.values()) if (!best || entry.count > best.count) best = entry;
  return best?.value;
}

function indent(text: string, by: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? line : by + line))
    .join('\n');
}

export interface ReleaseTableDefaults {
  readonly namespace: string;
  readonly releaseNamePrefix?: string;
  readonly timeout: string;
  readonly interval: string;
  readonly install: { disableHooks: boolean; disableWait: boolean };
  readonly upgrade: { disableHooks: boolean; disableWait: boolean };
}

/** Defaults shared by most releases, so each entry only says where it differs. */
export function tableDefaults(releases: readonly ImportedRelease[], namespace: string): ReleaseTableDefaults {
  const prefixes = releases.map((r) => (r.releaseName.endsWith(r.name) ? r.releaseName.slice(0, r.releaseName.length - r.name.length) : null));
  const prefix = mostCommon(prefixes);
  const flags = (which: 'install' | 'upgrade') => ({
    disableHooks: mostCommon(releases.map((r) => r[which].disableHooks)) ?? false,
    disableWait: mostCommon(releases.map((r) => r[which].disableWait)) ?? false,
  });
  return {
    namespace: mostCommon(releases.map((r) => r.namespace)) ?? namespace,
    ...(prefix ? { releaseNamePrefix: prefix } : {}),
    timeout: mostCommon(releases.map((r) => r.timeout)) ?? FLUX_DEFAULT_TIMEOUT,
    interval: mostCommon(releases.map((r) => r.interval)) ?? FLUX_DEFAULT_INTERVAL,
    install: flags('install'),
    upgrade: flags('upgrade'),
  };
}

function entryOf(r: ImportedRelease, d: ReleaseTableDefaults, staticFile: string): Record<string, unknown> {
  const entry: Record<string, unknown> = { name: r.name, chart: r.chart, service: r.service };
  if (r.group !== undefined) entry.group = r.group;
  if (r.releaseName !== `${d.releaseNamePrefix ?? ''}${r.name}`) entry.releaseName = r.releaseName;
  if (r.namespace !== d.namespace) entry.namespace = r.namespace;
  // App releases by name; another app's HelmRelease as {name, namespace} (an external dependency).
  if (r.dependencies.length > 0) entry.dependsOn = r.dependencies.map((dep) => (dep.external ? { name: dep.name, namespace: dep.namespace } : dep.name));
  if (r.timeout !== d.timeout) entry.timeout = r.timeout;
  if (r.interval !== d.interval) entry.interval = r.interval;
  for (const which of ['install', 'upgrade'] as const) {
    const full = actionFlagsPlain(r[which]);
    const own: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(full)) if ((k !== 'disableHooks' && k !== 'disableWait') || v !== d[which][k]) own[k] = v;
    if (Object.keys(own).length > 0) entry[which] = own;
  }
  if (Object.keys(r.labels).length > 0) entry.labels = { ...r.labels };
  if (Object.keys(r.annotations).length > 0) entry.annotations = { ...r.annotations };
  if (Object.keys(r.helmReleaseSpec).length > 0) entry.helmReleaseSpec = r.helmReleaseSpec;
  if (Object.keys(r.source.kustomization).length > 0) entry.kustomization = r.source.kustomization;
  if (staticFile !== `overrides/static/${r.chart}.yaml`) entry.staticOverrides = staticFile;
  return entry;
}

export function releasesYaml(
  releases: readonly ImportedRelease[],
  defaults: ReleaseTableDefaults,
  from: string,
  staticFileOf: (r: ImportedRelease) => string,
): string {
  const parts = [
    comment([
      `Release table imported by \`flotilla import\` from ${from}.`,
      'One entry per release folder, in the order of its kustomization.yaml; each',
      'entry says only where it differs from the defaults (see docs/app-format.md).',
      'service: every release has a service of its own name, all listed in',
      'features.services of overrides/deployment.yaml.',
    ]),
    dumpYaml({ defaults }),
    'releases:\n',
  ];
  for (const r of releases) {
    parts.push(`  # ${r.source.helmRelease.file}\n`, indent(dumpYaml([entryOf(r, defaults, staticFileOf(r))]), '  '));
  }
  return parts.join('');
}

export function buildYaml(manifests: StxManifests, from: string, tokens: readonly string[]): string {
  const repository = manifests.repository;
  const repo: Record<string, unknown> = { name: repository.name, url: repository.url };
  if (repository.interval !== undefined) repo.interval = repository.interval;
  if (Object.keys(repository.spec).length > 0) repo.spec = repository.spec;
  if (repository.labels) repo.labels = repository.labels;
  if (repository.annotations) repo.annotations = repository.annotations;
  const config: Record<string, unknown> = { helmRepository: repo };
  // Kustomization fields the source carries beyond the generated ones, written back as they were.
  if (Object.keys(manifests.kustomization).length > 0) config.kustomization = manifests.kustomization;
  if (Object.keys(manifests.baseKustomization).length > 0) config.baseKustomization = manifests.baseKustomization;
  let text = comment([`How \`flotilla build\` packages the app. helmRepository comes from ${from}.`]) + dumpYaml(config);
  if (tokens.length > 0) {
    text +=
      '\n' +
      comment([
        'The static overrides use build tokens that StarlingX replaces when it builds the',
        'package. Give their values here (or with --token NAME=VALUE); the build refuses',
        'to ship a file with a token left in it:',
        'tokens:',
        ...tokens.map((t) => `  ${t}: <value>`),
      ]);
  }
  return text;
}

export function deploymentYaml(
  catalogRelease: string,
  services: readonly string[],
  excluded: readonly { service: string; why: string }[],
  from: string,
): string {
  const lines = [
    `The deployment spec written by \`flotilla import\` from ${from}.`,
    'It turns on every imported release: each has a service of its own name,',
    'and all are listed in features.services.',
  ];
  if (excluded.length > 0) {
    lines.push('', 'Not listed (the source app does not deploy them by default either):');
    for (const e of excluded) lines.push(`  ${e.service}: ${e.why}`);
  }
  return comment(lines) + dumpYaml({ main: { release: catalogRelease }, features: { services: [...services] } });
}

export function versionYaml(catalogRelease: string, harvested: readonly HarvestedImage[], from: string): string {
  const lines =
    harvested.length > 0
      ? [
          `Release catalog written by \`flotilla import\` from ${from}.`,
          "images: harvested from the static overrides' images.tags. The static overrides",
          'still hold the same references, and the catalog sets the same value paths one',
          'layer above them (overrides/versions/images.yaml says where), so Helm sees the',
          'same values as in the source app. From now on change an image here (or with',
          'main.customImages): the catalog wins over the static overrides.',
        ]
      : [
          `Release catalog written by \`flotilla import\` from ${from}.`,
          'No image could be harvested from the static overrides (see images.yaml);',
          'the images stay in the static overrides, where Helm reads them.',
        ];
  const images = Object.fromEntries(harvested.map((h) => [h.field, h.reference]));
  return comment(lines) + dumpYaml({ release: catalogRelease, images, serviceDefaults: {} });
}

export function imagesYaml(harvested: readonly HarvestedImage[], skipped: readonly SkippedImage[]): string {
  const header = ['Where each image field of the catalog lands: chart → value path.'];
  if (harvested.length === 0) {
    header.push(
      'Empty: no images.tags reference of the static overrides could be harvested',
      'without changing what Helm sees; they stay in the static overrides.',
    );
  }
  let text = comment(header);
  if (harvested.length > 0) {
    text += dumpYaml(Object.fromEntries(harvested.map((h) => [h.field, Object.fromEntries(h.targets.map((t) => [t.chart, t.path]))])));
  }
  if (skipped.length > 0) {
    text +=
      '\n' +
      comment([
        'Left in the static overrides only (Helm still gets them from there):',
        ...skipped.map((s) => `  ${s.chart} ${s.path}: ${s.reason} (${formatLocation(s.location)})`),
      ]);
  }
  return text;
}
