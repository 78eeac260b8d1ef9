/**
 * A Helm HTTP repository in a folder (what a web server then serves): the
 * chart archives as `<name>-<version>.tgz` plus index.yaml. Publishing is
 * idempotent and additive: charts already there with the same digest are
 * left alone, other charts and versions stay in the index, and a version
 * already published with other content is refused before anything is
 * written. The archives are written first and the index last, each
 * atomically, so a reader never sees an index naming a missing file.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FlotillaError } from '../diagnostics/index.js';
import { fileErrorText, writeFileAtomic } from '../files/index.js';
import { readChartArchive } from './package.js';
import { mergeRepoIndex, type IndexedChart } from './repo-index.js';

export interface PublishOptions {
  /** Base URL the folder is served at; index entries' urls become `<urlPrefix>/<file>` (else the bare file name). */
  readonly urlPrefix?: string;
  /** RFC 3339 time for new entries and `generated` (default: now). */
  readonly created?: string;
}

export interface PublishedRepository {
  readonly index: string;
  readonly added: readonly IndexedChart[];
  readonly unchanged: readonly IndexedChart[];
}

async function readIfPresent(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new FlotillaError(`${file}: cannot read (${fileErrorText(error)})`);
  }
}

/** Publishes chart archives (`label` names each in errors) into the repository folder `dir`. */
export async function publishToFolder(dir: string, archives: readonly { label: string; bytes: Buffer }[], options: PublishOptions = {}): Promise<PublishedRepository> {
  const charts = await Promise.all(
    archives.map(async ({ label, bytes }) => {
      const chart = await readChartArchive(bytes, { label });
      const indexed: IndexedChart = {
        name: chart.name,
        version: chart.version,
        fileName: `${chart.name}-${chart.version}.tgz`,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        metadata: chart.metadata,
      };
      return { indexed, bytes };
    }),
  );
  const indexFile = join(dir, 'index.yaml');
  await mkdir(dir, { recursive: true });
  const existing = await readIfPresent(indexFile);
  const merged = mergeRepoIndex(existing?.toString('utf8'), charts.map((c) => c.indexed), {
    where: indexFile,
    created: options.created ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    urlPrefix: options.urlPrefix,
  });
  for (const { indexed, bytes } of charts) {
    const file = join(dir, indexed.fileName);
    const onDisk = await readIfPresent(file);
    // Also restores the file of an unchanged entry that went missing or was damaged.
    if (onDisk === undefined || !onDisk.equals(bytes)) await writeFileAtomic(file, bytes);
  }
  if (merged.added.length > 0 || existing === undefined) await writeFileAtomic(indexFile, merged.text);
  return { index: indexFile, added: merged.added, unchanged: merged.unchanged };
}
