/**
 * Entry names inside archives. Both the writer and the reader use one rule so
 * that whatever we write, we would also accept, and nothing we accept can
 * point outside the folder it is extracted into.
 */

export type PathCheck =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly problem: 'absolute-path' | 'parent-segment' | 'bad-path'; readonly reason: string };

/**
 * A name the rules below keep as it is: segments that are not empty, `.` or
 * `..`, without control characters or backslashes, no leading `/` or drive letter.
 */
const CANONICAL_PATH = /^(?![A-Za-z]:)(?!\.\.?(?:\/|$))[^\x00-\x1f\x7f/\\]+(?:\/(?!\.\.?(?:\/|$))[^\x00-\x1f\x7f/\\]+)*$/;

/**
 * Normalises an archive entry name to `a/b/c`: empty and `.` segments are
 * dropped. Absolute names, drive letters, `..` segments, control characters
 * and backslashes are refused (a backslash is a separator on Windows and a
 * plain character elsewhere, so readers would disagree on the name). An
 * empty result (`./`) is `path: ''`.
 */
export function checkEntryPath(raw: string): PathCheck {
  // Nearly every name is already canonical; a chart archive has hundreds.
  if (CANONICAL_PATH.test(raw)) return { ok: true, path: raw };
  if (raw.includes('\0')) return { ok: false, problem: 'bad-path', reason: 'name contains a NUL byte' };
  if (/[\x01-\x1f\x7f]/.test(raw)) return { ok: false, problem: 'bad-path', reason: 'name contains a control character' };
  if (raw.startsWith('/') || raw.startsWith('\\')) return { ok: false, problem: 'absolute-path', reason: 'absolute path' };
  if (/^[A-Za-z]:/.test(raw)) return { ok: false, problem: 'absolute-path', reason: 'path starts with a drive letter' };
  // `..` is looked for between either separator, so a Windows-made `..\x` is named for what it is.
  if (raw.split(/[/\\]/).includes('..')) return { ok: false, problem: 'parent-segment', reason: 'path has a ".." segment' };
  if (raw.includes('\\')) return { ok: false, problem: 'bad-path', reason: 'name contains a backslash' };
  const parts = raw.split('/').filter((segment) => segment !== '' && segment !== '.');
  // `./C:x` names `C:x` once normalised: a drive letter there is one too.
  if (/^[A-Za-z]:/.test(parts[0] ?? '')) return { ok: false, problem: 'absolute-path', reason: 'path starts with a drive letter' };
  return { ok: true, path: parts.join('/') };
}

/** Key under which two names count as the same file (NFC, so macOS-decomposed names collide too). */
export function collisionKey(path: string): string {
  return path.normalize('NFC');
}

/**
 * Byte-wise (UTF-8) order: the same on every machine and locale. UTF-16 code
 * units order strings as UTF-8 bytes do, except where a surrogate meets a
 * character from U+E000 up: only there are the bytes compared.
 */
export function compareBytewise(a: string, b: string): number {
  const shorter = Math.min(a.length, b.length);
  for (let i = 0; i < shorter; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
    return x - y;
  }
  return a.length - b.length;
}
