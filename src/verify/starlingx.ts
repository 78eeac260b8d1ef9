/**
 * What a StarlingX platform will not compute for a flotilla bundle. The
 * platform runs Python plugin wheels only, so the layers flotilla computes at
 * apply time (values templates, catalog images, the policy set, TypeScript
 * plugin overrides with their generated passwords, common/group and service
 * values of the deployment spec) never reach Flux when the platform applies
 * the bundle: the chart runs on its defaults and static overrides. One
 * warning per release that depends on such a layer says which.
 */
import { load } from 'js-yaml';
import type { BundledRelease, OpenedBundle } from './bundle.js';
import { text, yamlOf } from './bundle.js';

type Tree = Record<string, unknown>;
const isTree = (value: unknown): value is Tree => value !== null && typeof value === 'object' && !Array.isArray(value);
const nonEmpty = (value: unknown): boolean => isTree(value) && Object.keys(value).length > 0;

interface ManifestPlugin {
  readonly kind?: string;
  readonly name?: string;
  readonly chart?: string;
  readonly release?: string;
}

export function starlingxPlatformGaps(bundle: OpenedBundle, releases: readonly BundledRelease[]): string[] {
  const manifest = yamlOf(bundle, 'plugins/manifest.json') as { plugins?: ManifestPlugin[] } | undefined;
  const targets = yamlOf(bundle, 'app/overrides/versions/images.yaml');
  const deploymentText = text(bundle, 'app/overrides/deployment.yaml');
  const deployment = deploymentText === undefined ? undefined : (load(deploymentText) as unknown);
  const spec = isTree(deployment) ? deployment : {};
  const common = isTree(spec.common) ? spec.common : {};
  const services = isTree(spec.services) ? spec.services : {};
  const policyFiles = [...bundle.files.keys()].filter((p) => /^app\/policies\/[^/]+\/[^/]+\.ya?ml$/.test(p));
  const warnings: string[] = [];
  for (const release of releases) {
    const chart = release.chart;
    if (chart === undefined) continue;
    const hr = yamlOf(bundle, `fluxcd-manifests/${release.folder}/helmrelease.yaml`) as { metadata?: { labels?: Record<string, string> } } | undefined;
    const group = hr?.metadata?.labels?.chart_group;
    const layers: string[] = [];
    const template = `app/overrides/templates/${chart}.yaml.hbs`;
    if (bundle.files.has(template)) layers.push(`values template ${template.slice('app/'.length)}`);
    if (isTree(targets) && Object.values(targets).some((where) => isTree(where) && chart in where)) layers.push('catalog images');
    const policies = policyFiles.filter((p) => p.endsWith(`/${chart}.yaml`) || p.endsWith(`/${chart}.yml`));
    if (policies.length > 0) layers.push(`policy set ${policies.map((p) => p.split('/')[2]).join(', ')}`);
    const plugin = manifest?.plugins?.find((p) => p.kind === 'chart' && p.chart === chart && (p.release === undefined || p.release === release.folder));
    if (plugin) layers.push(`plugin ${plugin.name ?? chart} (getOverrides, generated passwords)`);
    const charts = isTree(common.charts) ? common.charts : {};
    const groups = isTree(common.groups) ? common.groups : {};
    const groupValues = group !== undefined && isTree(groups[group]) ? (groups[group] as Tree).values : undefined;
    const serviceValues = Object.values(services).some((s) => isTree(s) && isTree(s[chart]) && nonEmpty((s[chart] as Tree).values));
    if (nonEmpty(charts.values) || nonEmpty(groupValues) || serviceValues) layers.push('deployment spec values (common, group or service)');
    if (layers.length === 0) continue;
    warnings.push(
      `StarlingX platform: release ${release.folder} depends on layers the platform will not compute (${layers.join('; ')}); ` +
        'applied by StarlingX it gets only its static overrides: export them with flotilla overrides --all -d DIR and store them with system helm-override-update (docs/starlingx.md)',
    );
  }
  return warnings;
}
