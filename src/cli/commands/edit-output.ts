/** How every edit command ends: the unified diff on stdout, then the write (unless --dry-run) and a summary on stderr. */
import { unifiedDiff, writeChanges, type FileChange } from '../../edit/index.js';

export async function showAndWrite(changes: readonly FileChange[], dryRun: boolean | undefined): Promise<void> {
  const changed = changes.filter((c) => c.before !== c.after);
  for (const change of changed) process.stdout.write(unifiedDiff(change));
  if (changed.length === 0) {
    process.stderr.write('nothing to change: every value already is as asked\n');
    return;
  }
  const files = changed.map((c) => c.file).join(', ');
  if (dryRun) {
    process.stderr.write(`dry run: ${files} would change; nothing was written\n`);
    return;
  }
  await writeChanges(changed);
  process.stderr.write(`wrote ${files}\n`);
}
