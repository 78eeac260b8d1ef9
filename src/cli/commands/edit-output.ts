/** How every edit command ends: the unified diff (or, for -o json|yaml, the changes as data) on stdout, then the write (unless --dry-run) and a summary on stderr. */
import { unifiedDiff, writeChanges, type FileChange } from '../../edit/index.js';
import { printData, type Output } from '../output.js';

export async function showAndWrite(
  io: Output,
  format: string,
  changes: readonly FileChange[],
  dryRun: boolean | undefined,
  extra: Readonly<Record<string, unknown>> = {},
): Promise<void> {
  const changed = changes.filter((c) => c.before !== c.after);
  const files = changed.map((c) => ({ file: c.file, diff: unifiedDiff(c) }));
  printData(io, format, 'FileChanges', { ...extra, files, written: changed.length > 0 && dryRun !== true }, () => files.map((f) => f.diff.replace(/\n$/, '')));
  if (changed.length === 0) {
    io.err('nothing to change: every value already is as asked');
    return;
  }
  const names = changed.map((c) => c.file).join(', ');
  if (dryRun) {
    io.err(`dry run: ${names} would change; nothing was written`);
    return;
  }
  await writeChanges(changed);
  io.err(`wrote ${names}`);
}
