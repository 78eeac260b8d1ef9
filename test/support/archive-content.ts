/**
 * The content of a chart archive as an independent reader (node-tar) sees
 * it. Compared with another
 * archive of the same chart (`helm package`'s) file by file: Chart.yaml by
 * its parsed content (Helm writes it again from what it parsed, empty fields
 * left out), every other
 * file byte for byte; `.helmignore` files aside (Helm drops them, flotilla
 * keeps them for the chart's own reader).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { load } from 'js-yaml';
import { Parser, type ReadEntry } from 'tar';
import { expect } from 'vitest';

/** Every file below `dir`, by path relative to it, with its bytes. */
export function filesBelow(dir: string, prefix = ''): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) for (const [below, data] of filesBelow(path, `${prefix}${entry.name}/`)) files.set(below, data);
    else files.set(`${prefix}${entry.name}`, readFileSync(path));
  }
  return files;
}

/** The regular files of a .tgz as node-tar's parser reads them, in strict mode (a warning fails). */
export function filesOfArchive(archive: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    const files = new Map<string, Buffer>();
    const parser = new Parser({
      strict: true,
      onReadEntry: (entry: ReadEntry) => {
        const chunks: Buffer[] = [];
        entry.on('data', (chunk: Buffer) => chunks.push(chunk));
        entry.on('end', () => {
          if (entry.type !== 'File') return;
          if (files.has(entry.path)) reject(new Error(`${entry.path} twice in the archive`));
          files.set(entry.path, Buffer.concat(chunks));
        });
      },
    });
    parser.on('warn', (code: string, message: string) => reject(new Error(`${code}: ${message}`)));
    parser.on('error', reject);
    parser.on('close', () => resolve(files));
    parser.end(archive);
  });
}

/**
 * `files` with each nested chart archive (`…/charts/<name>-<version>.tgz`,
 * as `helm dependency build` vendors a dependency) replaced by its files
 * under `…/charts/<name>/`, as a dependency vendored as a folder holds them.
 */
export async function withNestedUnpacked(files: ReadonlyMap<string, Buffer>): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const [path, data] of files) {
    const nested = /^(.*\/charts)\/[^/]+\.tgz$/.exec(path);
    if (!nested) out.set(path, data);
    else for (const [inner, bytes] of await withNestedUnpacked(await filesOfArchive(data))) out.set(`${nested[1]}/${inner}`, bytes);
  }
  return out;
}

const isHelmignore = (path: string): boolean => path === '.helmignore' || path.endsWith('/.helmignore');
const isChartYaml = (path: string): boolean => /(^|\/)Chart\.yaml$/.test(path);

/** A parsed Chart.yaml as Helm writes it again: Go's `omitempty` drops empty lists and maps, "", false and 0. */
function omitEmpty(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(omitEmpty);
  if (value === null || typeof value !== 'object') return value;
  const kept = Object.entries(value).map(([key, field]) => [key, omitEmpty(field)] as const);
  return Object.fromEntries(
    kept.filter(
      ([, field]) =>
        !(
          field === null ||
          field === '' ||
          field === false ||
          field === 0 ||
          (Array.isArray(field) && field.length === 0) ||
          (typeof field === 'object' && Object.keys(field).length === 0)
        ),
    ),
  );
}

/**
 * Expects `ours` and `theirs` (files by path) to hold the same chart:
 * the same paths but `.helmignore`, each Chart.yaml equal once parsed
 * (and passed through `chartYaml`), every other file equal byte for byte.
 */
export function expectSameChart(
  label: string,
  ours: ReadonlyMap<string, Buffer>,
  theirs: ReadonlyMap<string, Buffer>,
  chartYaml: (parsed: unknown) => unknown = (parsed) => parsed,
): void {
  const paths = (files: ReadonlyMap<string, Buffer>) => [...files.keys()].filter((path) => !isHelmignore(path)).sort();
  expect(paths(ours), label).toEqual(paths(theirs));
  for (const path of paths(ours)) {
    const [a, b] = [ours.get(path)!, theirs.get(path)!];
    if (isChartYaml(path)) expect(omitEmpty(chartYaml(load(a.toString('utf8')))), `${label}: ${path}`).toEqual(omitEmpty(chartYaml(load(b.toString('utf8')))));
    else expect(a.equals(b), `${label}: ${path} differs`).toBe(true);
  }
}

/** A Chart.lock as compared: its parsed content but the time it was `generated` (Helm writes the clock's, flotilla a fixed one). */
const lockContent = (data: Buffer): unknown => ({ ...(load(data.toString('utf8')) as object), generated: undefined });

/** The files of a chart archive by path under its chart folder, nested chart archives unpacked in their place (see withNestedUnpacked). */
export async function chartContent(archive: Buffer): Promise<Map<string, Buffer>> {
  const files = await withNestedUnpacked(await filesOfArchive(archive));
  return new Map([...files].map(([path, data]) => [path.slice(path.indexOf('/') + 1), data]));
}

/**
 * The differences between two charts' files, one line each naming the
 * path (none when they hold the same chart): every file, `.helmignore`
 * included (`helm package` keeps a chart's own); each Chart.yaml by its
 * parsed content as Helm writes it again, each Chart.lock but its
 * `generated`, every other file byte for byte.
 */
export function chartDifferences(ours: ReadonlyMap<string, Buffer>, theirs: ReadonlyMap<string, Buffer>): string[] {
  const problems: string[] = [];
  for (const path of [...new Set([...ours.keys(), ...theirs.keys()])].sort()) {
    const [a, b] = [ours.get(path), theirs.get(path)];
    if (a === undefined) problems.push(`${path}: only in helm's`);
    else if (b === undefined) problems.push(`${path}: only in flotilla's`);
    else if (
      isChartYaml(path)
        ? !isDeepStrictEqual(omitEmpty(load(a.toString('utf8'))), omitEmpty(load(b.toString('utf8'))))
        : /(^|\/)Chart\.lock$/.test(path)
          ? !isDeepStrictEqual(lockContent(a), lockContent(b))
          : !a.equals(b)
    ) {
      problems.push(`${path}: differs`);
    }
  }
  return problems;
}
