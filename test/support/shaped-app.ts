/**
 * A generated app with the shapes real chart repositories have and the
 * synthetic bench app lacks: charts of 1 to 400 files, nested folders,
 * binary files, files over 64 KiB, library charts vendored at several depths
 * (in a chart's `charts/`, in a vendored chart's `charts/`, and shared by the
 * app through `file://../<library>`), names near ustar's 100 bytes, non-ASCII
 * names, charts with and without `.helmignore`. Seeded: the same seed writes
 * the same app, and {@link editShapedApp} the same edits, so a failure
 * replays from its seed.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, type Dirent } from 'node:fs';
import { dirname, join } from 'node:path';
import { seededRandom } from './random.js';

type Random = () => number;

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const between = (random: Random, low: number, high: number): number => low + Math.floor(random() * (high - low + 1));

function write(root: string, path: string, data: string | Buffer): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), data);
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike', 'november'];
const NON_ASCII = ['données', 'größe', 'ñandú', '設定', 'κλειδί', 'файл', 'émoji-🚀'];

/** Text of about `bytes` bytes: template-like lines of words, so it compresses as real templates do. */
function text(random: Random, bytes: number): string {
  const lines: string[] = [];
  let length = 0;
  while (length < bytes) {
    const line = `{{- /* ${pick(random, WORDS)} */}} ${pick(random, WORDS)}_${between(random, 0, 999)}: {{ .Values.${pick(random, WORDS)} | default "${pick(random, WORDS)}" }}`;
    lines.push(line);
    length += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

/** Binary data: random bytes (incompressible), or runs of a few byte values (compressible), each with every byte value somewhere. */
function binary(random: Random, bytes: number): Buffer {
  const data = Buffer.alloc(bytes);
  const noisy = random() < 0.5;
  for (let i = 0; i < bytes; i++) data[i] = noisy ? Math.floor(random() * 256) : (i >> between(random, 3, 6)) & 0x0f;
  for (let i = 0; i < Math.min(256, bytes); i++) data[i] = i;
  return data;
}

/** A file name `length` bytes long in `folder` (ASCII), for names around ustar's 100-byte limit once under `<chart>/`. */
function nameOfLength(random: Random, length: number, extension: string): string {
  const stem = Math.max(1, length - extension.length);
  let name = '';
  while (name.length < stem) name += `${pick(random, WORDS)}-`;
  return `${name.slice(0, stem)}${extension}`;
}

const HELMIGNORE = '# generated\n*.bak\n.git/\nscratch/\n';

/** The files of one chart (Chart.yaml written apart), `count` in all, with the shapes listed above. */
function chartFiles(random: Random, chart: string, count: number): Map<string, string | Buffer> {
  const files = new Map<string, string | Buffer>();
  if (count >= 2)
    files.set(
      'values.yaml',
      `replicas: ${between(random, 1, 5)}\nimage:\n  tag: "${between(random, 1, 9)}.${between(random, 0, 9)}"\n${pick(random, WORDS)}: ${pick(random, WORDS)}\n`,
    );
  while (files.size < count - 1) {
    const kind = random();
    const depth = between(random, 0, 4);
    const folders = Array.from({ length: depth }, () => pick(random, WORDS)).join('/');
    const base = folders === '' ? 'templates' : `templates/${folders}`;
    if (kind < 0.55) files.set(`${base}/${pick(random, WORDS)}-${files.size}.yaml`, text(random, between(random, 40, 6000)));
    else if (kind < 0.62) files.set(`files/${folders === '' ? '' : `${folders}/`}blob-${files.size}.bin`, binary(random, between(random, 1, 20_000)));
    else if (kind < 0.7 && random() < 0.25)
      files.set(
        `files/large-${files.size}.${random() < 0.5 ? 'json' : 'bin'}`,
        random() < 0.5 ? text(random, between(random, 65 * 1024, 200 * 1024)) : binary(random, between(random, 65 * 1024, 160 * 1024)),
      );
    else if (kind < 0.8) {
      // The whole name in the archive, `<chart>/templates/…`, from 95 to 110 bytes: ustar's 100 on both sides.
      const length = between(random, 95, 110) - chart.length - '/templates/'.length;
      files.set(`templates/${nameOfLength(random, length, '.yaml')}`, text(random, between(random, 40, 400)));
    } else if (kind < 0.85) files.set(`files/${pick(random, NON_ASCII)}-${files.size}.txt`, `${pick(random, NON_ASCII)} ${text(random, 100)}`);
    else if (kind < 0.9) files.set(`templates/_helpers-${files.size}.tpl`, `{{- define "${chart}.h${files.size}" -}}\n${text(random, 300)}{{- end -}}\n`);
    else if (kind < 0.95) files.set(`${random() < 0.5 ? 'scratch' : 'files'}/note-${files.size}.bak`, text(random, 200));
    else files.set(`README-${files.size}.md`, `# ${chart}\n\n${text(random, between(random, 100, 3000))}`);
  }
  return files;
}

function chartYaml(name: string, version: string, type: 'application' | 'library', dependencies: readonly { name: string; repository?: string }[]): string {
  const deps = dependencies.map((d) => `  - name: ${d.name}\n    version: ">=0.0.0"\n${d.repository ? `    repository: ${d.repository}\n` : ''}`).join('');
  return `apiVersion: v2\nname: ${name}\nversion: ${version}\ntype: ${type}\n${deps ? `dependencies:\n${deps}` : ''}`;
}

/** Writes chart `name` into `dir` with `count` files and the given dependencies (folders below `charts/` written by the caller). */
function writeChart(
  random: Random,
  dir: string,
  name: string,
  count: number,
  type: 'application' | 'library',
  dependencies: readonly { name: string; repository?: string }[],
): void {
  write(dir, 'Chart.yaml', chartYaml(name, `0.${between(random, 1, 9)}.${between(random, 0, 20)}`, type, dependencies));
  for (const [path, data] of chartFiles(random, name, count)) write(dir, path, data);
  if (random() < 0.5) write(dir, '.helmignore', HELMIGNORE);
}

export interface ShapedAppOptions {
  readonly charts: number;
  readonly seed: number;
}

/** How many files a chart gets: most a few dozen, some hundreds, a few one or two. */
function fileCount(random: Random): number {
  const r = random();
  if (r < 0.08) return between(random, 1, 2);
  if (r < 0.75) return between(random, 3, 40);
  if (r < 0.95) return between(random, 41, 150);
  return between(random, 151, 400);
}

const LIBRARIES = ['lib-common', 'lib-deep'];

/** Writes a library chart's source once, at `dir` (the same files wherever it is written, by its own seed). */
function writeLibrary(dir: string, library: string, seed: number): void {
  const random = seededRandom(seed * 31 + LIBRARIES.indexOf(library) + 1);
  writeChart(random, dir, library, library === 'lib-common' ? 60 : 25, 'library', []);
}

/**
 * Writes the app into `root`: `charts` application charts, the libraries
 * shared through `charts/<library>` at the app's top, one release per chart.
 * Returns the charts' names.
 */
export function writeShapedApp(root: string, options: ShapedAppOptions): string[] {
  const random = seededRandom(options.seed);
  for (const library of LIBRARIES) writeLibrary(join(root, 'charts', library), library, options.seed);
  const names: string[] = [];
  const releases: string[] = [];
  // Released in a random order, not the order written.
  const order = Array.from({ length: options.charts }, (_, c) => c);
  for (let i = order.length - 1; i > 0; i--) {
    const j = between(random, 0, i);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  for (const c of order) {
    const name = `${pick(random, WORDS)}-${c}`;
    names.push(name);
    const dir = join(root, 'charts', name);
    const how = random();
    const dependencies: { name: string; repository?: string }[] = [];
    if (how < 0.3) dependencies.push({ name: 'lib-common', repository: 'file://../lib-common' });
    else if (how < 0.5) {
      // Vendored in the chart's own charts/.
      dependencies.push({ name: 'lib-common' });
      writeLibrary(join(dir, 'charts', 'lib-common'), 'lib-common', options.seed);
    } else if (how < 0.65) {
      // A vendored sub-chart that vendors a library in its turn: a library two levels down.
      dependencies.push({ name: 'sub' });
      const sub = join(dir, 'charts', 'sub');
      writeChart(random, sub, 'sub', between(random, 2, 12), 'application', [{ name: 'lib-deep' }]);
      writeLibrary(join(sub, 'charts', 'lib-deep'), 'lib-deep', options.seed);
    }
    writeChart(random, dir, name, fileCount(random), 'application', dependencies);
    write(root, `overrides/static/${name}.yaml`, `# static overrides of ${name}\nreplicas: ${between(random, 1, 3)}\n`);
    releases.push(`  - name: ${name}\n    chart: ${name}\n    service: s${c}\n    group: apps\n`);
  }
  write(root, 'fluxcd/metadata.yaml', 'app_name: shaped\napp_version: 1.0-0\nsupported_k8s_version:\n  minimum: v1.29.0\n');
  write(root, 'fluxcd/releases.yaml', `defaults:\n  namespace: apps\n  timeout: 30m\nreleases:\n${releases.join('')}`);
  write(root, 'overrides/deployment.yaml', `main:\n  release: "2025.1"\nfeatures:\n  services: [${names.map((_, c) => `s${c}`).join(', ')}]\n`);
  write(root, 'overrides/versions/2025.1.yaml', 'release: "2025.1"\nimages: {}\n');
  return names;
}

/** Every file below `dir`, relative, sorted. */
function filesIn(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

/**
 * Makes one random edit to the app written by {@link writeShapedApp}:
 * rewrites, adds, removes or renames a file of a chart or of a library
 * (vendored or shared), writes the same bytes again, adds or removes a
 * `.helmignore`, or edits a static override. Returns what it did, for the
 * failure message.
 */
export function editShapedApp(root: string, random: Random): string {
  const charts = join(root, 'charts');
  const chart = pick(random, readdirSync(charts).sort());
  const dir = join(charts, chart);
  const files = filesIn(dir).filter((path) => !path.endsWith('Chart.yaml'));
  const kind = random();
  if (kind < 0.1) {
    const override = pick(random, readdirSync(join(root, 'overrides', 'static')).sort());
    write(root, `overrides/static/${override}`, `# edited\nreplicas: ${between(random, 4, 9)}\n`);
    return `edit overrides/static/${override}`;
  }
  if (files.length === 0 || kind < 0.3) {
    const path = `templates/${pick(random, NON_ASCII)}/${nameOfLength(random, between(random, 5, 80), '.yaml')}`;
    write(dir, path, text(random, between(random, 10, 2000)));
    return `add ${chart}/${path}`;
  }
  const path = pick(random, files);
  // The files the build parses get content of their kind: random bytes there are a user error Helm refuses too (tested elsewhere), not a shape.
  if (kind < 0.55 && (path === 'values.yaml' || path.endsWith('/values.yaml'))) {
    write(dir, path, `replicas: ${between(random, 1, 9)}\n${pick(random, WORDS)}: ${text(random, between(random, 1, 40)).replace(/[^a-z]/gi, '') || 'x'}\n`);
    return `rewrite ${chart}/${path}`;
  }
  if (kind < 0.55 && (path === '.helmignore' || path.endsWith('/.helmignore'))) {
    write(dir, path, `${HELMIGNORE}# ${pick(random, WORDS)}\n*.${pick(random, WORDS)}\n`);
    return `rewrite ${chart}/${path}`;
  }
  if (kind < 0.55) {
    write(dir, path, random() < 0.3 ? binary(random, between(random, 1, 70_000)) : text(random, between(random, 1, 9000)));
    return `rewrite ${chart}/${path}`;
  }
  if (kind < 0.65) {
    write(dir, path, readFileSync(join(dir, path)));
    return `write ${chart}/${path} again unchanged`;
  }
  if (kind < 0.8) {
    rmSync(join(dir, path));
    return `remove ${chart}/${path}`;
  }
  if (kind < 0.9) {
    const target = `${dirname(path) === '.' ? '' : `${dirname(path)}/`}moved-${between(random, 0, 999)}-${path.split('/').pop()}`;
    write(dir, target, readFileSync(join(dir, path)));
    rmSync(join(dir, path));
    return `rename ${chart}/${path} to ${target}`;
  }
  const ignore = join(dir, '.helmignore');
  if (existsSync(ignore)) {
    rmSync(ignore);
    return `remove ${chart}/.helmignore`;
  }
  write(dir, '.helmignore', HELMIGNORE);
  return `add ${chart}/.helmignore`;
}
