/**
 * A generated app for the build benchmark: `charts` charts, each depending on
 * a library chart about the size of openstack-helm's helm-toolkit, with a
 * static override per chart. helm-toolkit has 138 template files; a sample of
 * them runs from 1.5 KB (snippets, most of them) to 18 KB (scripts), about
 * 3.5 KB on average: ~0.5 MB. The library here: 130 files of ~3.6 KB.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** A named template of realistic bulk: helm-toolkit's are mostly long `define` blocks. */
function libraryTemplate(i: number): string {
  const lines = [`{{/* snippet ${i}: renders a block of configuration from values */}}`, `{{- define "toolkit.snippet${i}" -}}`];
  for (let j = 0; j < 25; j++) {
    lines.push(
      `{{- $v${j} := index .Values "conf" | default dict }}`,
      `# option_${i}_${j}: {{ $v${j} | toJson | quote }} keeps the rendered file stable across releases`,
    );
  }
  lines.push('{{- end -}}');
  return `${lines.join('\n')}\n`;
}

export function generateBenchApp(root: string, charts: number): string[] {
  write(root, 'charts/toolkit/Chart.yaml', 'apiVersion: v2\nname: toolkit\nversion: 0.1.0\ntype: library\n');
  for (let i = 0; i < 130; i++) write(root, `charts/toolkit/templates/_snippet${String(i).padStart(3, '0')}.tpl`, libraryTemplate(i));
  const names: string[] = [];
  const releases: string[] = [];
  const images: string[] = [];
  const targets: string[] = [];
  for (let c = 0; c < charts; c++) {
    const name = `svc${String(c).padStart(2, '0')}`;
    names.push(name);
    write(
      root,
      `charts/${name}/Chart.yaml`,
      `apiVersion: v2\nname: ${name}\nversion: 0.1.0\nappVersion: "1.0"\ndependencies:\n  - name: toolkit\n    version: 0.1.0\n    repository: file://../toolkit\n`,
    );
    write(
      root,
      `charts/${name}/values.yaml`,
      `images:\n  tags:\n    ${name}_api: example/${name}:1\npod:\n  replicas:\n    api: 1\nconf:\n  ${name}:\n    DEFAULT:\n      debug: false\n`,
    );
    for (const kind of ['deployment', 'service', 'configmap', 'job-db-sync', 'job-bootstrap', 'secret', 'pdb', 'ingress']) {
      write(
        root,
        `charts/${name}/templates/${kind}.yaml`,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-${kind}\ndata:\n  rendered: |\n{{ include "toolkit.snippet1" . | indent 4 }}\n`,
      );
    }
    write(root, `overrides/static/${name}.yaml`, `# static overrides of ${name}\npod:\n  replicas:\n    api: 2\n`);
    releases.push(
      `  - name: ${name}\n    chart: ${name}\n    service: s${c}\n    group: openstack\n${c > 0 ? `    dependsOn: [svc${String(c - 1).padStart(2, '0')}]\n` : ''}`,
    );
    images.push(`  ${name}_api: docker.io/example/${name}:2025.1`);
    targets.push(`${name}_api:\n  ${name}: images.tags.${name}_api`);
  }
  write(root, 'fluxcd/metadata.yaml', 'app_name: bench\napp_version: 1.0-0\nsupported_k8s_version:\n  minimum: v1.29.0\n');
  write(root, 'fluxcd/releases.yaml', `defaults:\n  namespace: openstack\n  timeout: 30m\nreleases:\n${releases.join('')}`);
  write(root, 'overrides/deployment.yaml', `main:\n  release: "2025.1"\nfeatures:\n  services: [${names.map((_, c) => `s${c}`).join(', ')}]\n`);
  write(root, 'overrides/versions/2025.1.yaml', `release: "2025.1"\nimages:\n${images.join('\n')}\n`);
  write(root, 'overrides/versions/images.yaml', `${targets.join('\n')}\n`);
  return names;
}

/** Deterministic words (a linear congruential generator), so large templates do not compress to nothing. */
function words(seed: number): () => string {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state.toString(36);
  };
}

/**
 * The second shape: `charts` charts with no shared library, each with large
 * templates of its own (8 × ~62 KB: ~0.5 MB a chart, like a chart carrying
 * big dashboards or CRDs). Sharing compressed library bytes cannot help here.
 */
export function generateLargeTemplateApp(root: string, charts: number): string[] {
  const names: string[] = [];
  const releases: string[] = [];
  for (let c = 0; c < charts; c++) {
    const name = `big${String(c).padStart(2, '0')}`;
    names.push(name);
    const word = words(c + 1);
    write(root, `charts/${name}/Chart.yaml`, `apiVersion: v2\nname: ${name}\nversion: 0.1.0\nappVersion: "1.0"\n`);
    write(root, `charts/${name}/values.yaml`, `conf:\n  ${name}:\n    enabled: true\n`);
    for (let t = 0; t < 8; t++) {
      const lines = [`apiVersion: v1`, `kind: ConfigMap`, `metadata:`, `  name: {{ .Release.Name }}-data${t}`, `data:`, `  blob: |`];
      for (let l = 0; l < 1300; l++) lines.push(`    ${word()} ${word()} {{ "${word()}" }} ${word()}: ${word()}`);
      write(root, `charts/${name}/templates/data${t}.yaml`, `${lines.join('\n')}\n`);
    }
    write(root, `overrides/static/${name}.yaml`, `# static overrides of ${name}\nconf:\n  ${name}:\n    enabled: true\n`);
    releases.push(`  - name: ${name}\n    chart: ${name}\n    service: s${c}\n    group: openstack\n`);
  }
  write(root, 'fluxcd/metadata.yaml', 'app_name: bench-large\napp_version: 1.0-0\nsupported_k8s_version:\n  minimum: v1.29.0\n');
  write(root, 'fluxcd/releases.yaml', `defaults:\n  namespace: openstack\n  timeout: 30m\nreleases:\n${releases.join('')}`);
  write(root, 'overrides/deployment.yaml', `main:\n  release: "2025.1"\nfeatures:\n  services: [${names.map((_, c) => `s${c}`).join(', ')}]\n`);
  write(root, 'overrides/versions/2025.1.yaml', `release: "2025.1"\nimages: {}\n`);
  return names;
}

/**
 * A chart plugin per chart, each computing its overrides from the context
 * (release, version, endpoints of the other releases), for timing the values
 * engine with plugins over every release.
 */
export function generatePlugins(root: string, names: readonly string[]): void {
  names.forEach((name, i) => {
    const order = String(10 + i).padStart(3, '0');
    write(
      root,
      `plugins/${order}_${name}.ts`,
      `import { ChartPlugin, type ChartContext, type Values } from 'flotilla/plugin';

export default class Plugin${i} extends ChartPlugin {
  readonly chart = '${name}';

  override async getOverrides(ctx: ChartContext): Promise<Values> {
    const peers = ctx.releases.filter((r) => r.name !== ctx.release.name).map((r) => r.name);
    return {
      conf: { ${name}: { DEFAULT: { release: ctx.version.release, region: 'RegionOne', peers: peers.slice(0, 3).join(',') } } },
      endpoints: { ${name}: { host: \`\${ctx.release.name}.\${ctx.release.namespace}.svc\`, port: { api: 8${String(i).padStart(3, '0')} } } },
      pod: { replicas: { api: ctx.release.dependsOn.length > 0 ? 2 : 1 } },
    };
  }
}
`,
    );
  });
}
