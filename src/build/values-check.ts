/**
 * Build refuses what any other command refuses: every release's values
 * computed (static overrides parsed, templates rendered, layers merged,
 * plugins run offline) through `Session.checkAll`. The check is kept by a
 * digest of everything it reads, in the build cache, so a build whose inputs
 * passed before neither renders a template nor loads the template engine
 * (docs/architecture.md, "The session").
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../files/index.js';
import type { Session } from '../session/index.js';

const FORMAT = 'flotilla-values-check/1';

/**
 * `inputs`: every file the values are computed from, by name (the app's
 * metadata, release table, overrides and policies as shipped, the charts'
 * Chart.yaml and values.yaml, the plugin bundle).
 */
export async function checkValuesOnce(session: Session, inputs: Iterable<readonly [string, string | Uint8Array]>, cacheDir: string | undefined): Promise<void> {
  const hash = createHash('sha256').update(`${FORMAT}\0`);
  for (const [name, data] of [...inputs].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) hash.update(`${name}\0`).update(data).update('\0');
  const marker = cacheDir && join(cacheDir, `values-check-${hash.digest('hex')}`);
  if (marker && existsSync(marker)) return;
  await session.checkAll();
  if (marker) {
    await mkdir(cacheDir, { recursive: true });
    await writeFileAtomic(marker, '');
  }
}
