/**
 * Copies of a built tarball with files changed, written as build would
 * write them: the checksum files recomputed unless `keepChecksums` (a
 * tampering that forgot them).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { md5sumFile, sha256sumFile, writeTarGz } from '../../src/tarball/index.js';
import { tempDir } from '../support/app-fixture.js';

export function tarballVariant(
  files: ReadonlyMap<string, Buffer>,
  change: (files: Map<string, Buffer>) => void,
  options: { keepChecksums?: boolean } = {},
): string {
  const changed = new Map(files);
  change(changed);
  if (!options.keepChecksums) {
    changed.delete('checksum.md5');
    changed.delete('checksum.sha256');
    const entries = [...changed].map(([path, data]) => ({ path, data }));
    changed.set('checksum.md5', Buffer.from(md5sumFile(entries)));
    changed.set('checksum.sha256', Buffer.from(sha256sumFile(entries)));
  }
  const file = join(tempDir(), 'demo-1.0-1.tgz');
  writeFileSync(file, writeTarGz([...changed].map(([path, data]) => ({ path, data }))));
  return file;
}
