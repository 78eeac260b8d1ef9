/** Reading a file together with what stat says of it. */
import { closeSync, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';

/**
 * A file read whole through one descriptor, with what stat says of the
 * file it read (not of another the name came to point at meanwhile).
 */
export function readWithStats(path: string): { readonly data: Buffer; readonly info: Stats } {
  const fd = openSync(path, 'r');
  try {
    const info = fstatSync(fd);
    return { data: readFileSync(fd), info };
  } finally {
    closeSync(fd);
  }
}
