/**
 * Chart archives compared by content, the way the corpus and dependency
 * tests hold flotilla's against `helm package`'s: every file by path
 * (relative to the chart folder), a dependency by its files whether it is
 * vendored as a folder (`charts/<name>/…`) or as a nested archive
 * (`charts/<name>-<version>.tgz`, unpacked in its place), every Chart.yaml by
 * its parsed content, a Chart.lock by its parsed content but the time it was
 * `generated` (Helm writes the clock's; flotilla, building reproducibly, a
 * fixed one), every other file byte for byte.
 */
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import { readTarGzEntriesSync } from '../../src/bundle/index.js';

/** The files of a chart archive by path under its top folder, nested chart archives under charts/ unpacked into `charts/<chart name>/`. */
export function chartArchiveFiles(bytes: Buffer, label = 'chart archive'): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const entry of readTarGzEntriesSync(bytes, { label })) {
    if (entry.type !== 'file') continue;
    const path = entry.path.slice(entry.path.indexOf('/') + 1);
    const nested = /^((?:.*\/)?charts)\/[^/]+\.tgz$/.exec(path);
    if (nested) {
      const inner = chartArchiveFiles(entry.data, `${label}#${path}`);
      const name = (parse(inner.get('Chart.yaml')!.toString('utf8')) as { name: string }).name;
      for (const [rel, data] of inner) files.set(`${nested[1]}/${name}/${rel}`, data);
      continue;
    }
    files.set(path, entry.data);
  }
  return files;
}

const named = (path: string, file: string): boolean => path === file || path.endsWith(`/${file}`);

function sameContent(path: string, a: Buffer, b: Buffer): boolean {
  if (named(path, 'Chart.yaml')) return isDeepStrictEqual(parse(a.toString('utf8')), parse(b.toString('utf8')));
  if (named(path, 'Chart.lock')) {
    const lock = (data: Buffer) => ({ ...(parse(data.toString('utf8')) as object), generated: undefined });
    return isDeepStrictEqual(lock(a), lock(b));
  }
  return a.equals(b);
}

/** The differences between two charts' files (empty when equal), each a line naming the path. */
export function chartDifferences(ours: ReadonlyMap<string, Buffer>, theirs: ReadonlyMap<string, Buffer>): string[] {
  const problems: string[] = [];
  for (const path of [...new Set([...ours.keys(), ...theirs.keys()])].sort()) {
    const a = ours.get(path);
    const b = theirs.get(path);
    if (a === undefined) problems.push(`${path}: only in helm's`);
    else if (b === undefined) problems.push(`${path}: only in flotilla's`);
    else if (!sameContent(path, a, b)) problems.push(`${path}: differs`);
  }
  return problems;
}
