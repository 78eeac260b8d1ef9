/**
 * Where the StarlingX app is read from: an unpacked folder, or the
 * application tarball itself (read in memory with the safe tar reader, never
 * extracted). Paths are relative to the app's top level (where metadata.yaml
 * is); the importer only ever asks for paths it built from validated
 * single-segment names.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isBundleFileName, openBundle } from '../tarball/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import { directorySource, memorySource, type FileSource } from '../files/index.js';

export async function openSource(path: string): Promise<FileSource> {
  const root = resolve(path);
  const info = await stat(root).catch(() => undefined);
  if (!info) throw new FlotillaError(`${root} does not exist`);
  if (info.isDirectory()) return directorySource(root);
  if (info.isFile() && isBundleFileName(root)) return memorySource((await openBundle(root)).files, root);
  throw new FlotillaError(`${root} is neither a folder nor a StarlingX application tarball (.tgz / .tar.gz)`);
}
