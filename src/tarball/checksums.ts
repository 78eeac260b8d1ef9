/**
 * Checksum files in the formats `md5sum -c` (StarlingX's checksum.md5) and
 * `sha256sum -c` (our checksum.sha256) read: one `<hex>  <path>` line per
 * file, sorted byte-wise, covering every file except the checksum files.
 */
import { createHash } from 'node:crypto';
import { CHECKSUM_FILES, isChecksumFile, type ChecksumAlgorithm } from './layout.js';
import { compareBytewise } from './paths.js';
import type { TarEntry } from './tar-write.js';

/** Files by path: an archive read into memory, or the entry list about to be written. */
export type FileSet = ReadonlyMap<string, Buffer | string> | readonly TarEntry[];

const HEX_LENGTH: Readonly<Record<ChecksumAlgorithm, number>> = { sha256: 64, md5: 32 };

function toMap(files: FileSet): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const add = (path: string, data: Buffer | string): void => {
    out.set(path, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  };
  if (Array.isArray(files)) for (const entry of files as readonly TarEntry[]) add(entry.path, entry.data);
  else for (const [path, data] of files as ReadonlyMap<string, Buffer | string>) add(path, data);
  return out;
}

/** Each file's digest: the one a tar entry carries, else computed. */
function digests(algorithm: ChecksumAlgorithm, files: FileSet): Map<string, string> {
  const out = new Map<string, string>();
  if (Array.isArray(files)) for (const entry of files as readonly TarEntry[]) out.set(entry.path, entry[algorithm] ?? digestHex(algorithm, entry.data));
  else for (const [path, data] of files as ReadonlyMap<string, Buffer | string>) out.set(path, digestHex(algorithm, data));
  return out;
}

export function digestHex(algorithm: ChecksumAlgorithm, data: Buffer | string): string {
  return createHash(algorithm).update(data).digest('hex');
}

/** GNU coreutils escaping: a name with `\` or a newline gets a leading `\` on its line. */
function escapeName(path: string): { escaped: boolean; name: string } {
  if (!/[\\\n\r]/.test(path)) return { escaped: false, name: path };
  return { escaped: true, name: path.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r') };
}

function unescapeName(name: string): string {
  return name.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c));
}

/** A checksum file's text for `algorithm` over `files` (checksum files themselves excluded). */
function checksumFile(algorithm: ChecksumAlgorithm, files: FileSet): string {
  const map = digests(algorithm, files);
  const paths = [...map.keys()].filter((p) => !isChecksumFile(p)).sort(compareBytewise);
  let out = '';
  for (const path of paths) {
    const { escaped, name } = escapeName(path);
    out += `${escaped ? '\\' : ''}${map.get(path)!}  ${name}\n`;
  }
  return out;
}

export const md5sumFile = (files: FileSet): string => checksumFile('md5', files);
export const sha256sumFile = (files: FileSet): string => checksumFile('sha256', files);

export type ChecksumProblem =
  | { readonly kind: 'missing-checksum-file'; readonly checksumFile: string }
  | { readonly kind: 'malformed-line'; readonly checksumFile: string; readonly line: number; readonly text: string }
  | { readonly kind: 'duplicate-line'; readonly checksumFile: string; readonly line: number; readonly path: string }
  | { readonly kind: 'missing-file'; readonly checksumFile: string; readonly line: number; readonly path: string }
  | {
      readonly kind: 'mismatch';
      readonly checksumFile: string;
      readonly line: number;
      readonly path: string;
      readonly expected: string;
      readonly actual: string;
    }
  | { readonly kind: 'not-listed'; readonly checksumFile: string; readonly path: string };

export function formatChecksumProblem(problem: ChecksumProblem): string {
  switch (problem.kind) {
    case 'missing-checksum-file':
      return `${problem.checksumFile} is missing`;
    case 'malformed-line':
      return `${problem.checksumFile}:${problem.line}: not a checksum line: ${JSON.stringify(problem.text)}`;
    case 'duplicate-line':
      return `${problem.checksumFile}:${problem.line}: ${problem.path} is listed more than once`;
    case 'missing-file':
      return `${problem.checksumFile}:${problem.line}: ${problem.path} is listed but missing`;
    case 'mismatch':
      return `${problem.checksumFile}:${problem.line}: ${problem.path} checksum mismatch (expected ${problem.expected}, got ${problem.actual})`;
    case 'not-listed':
      return `${problem.path} is not listed in ${problem.checksumFile}`;
  }
}

/** A checksum file's line as `sha256sum -c` reads it: the path (unescaped, `./` dropped) and the digest; undefined when it is not one. */
function parseChecksumLine(algorithm: ChecksumAlgorithm, raw: string): { readonly path: string; readonly digest: string } | undefined {
  const match = new RegExp(`^(\\\\?)([0-9a-fA-F]{${HEX_LENGTH[algorithm]}}) [ *](.+)$`).exec(raw);
  if (!match) return undefined;
  const rawName = match[1] ? unescapeName(match[3]!) : match[3]!;
  // `find . | md5sum` style lists say ./a
  return { path: rawName.replace(/^(?:\.\/)+/, ''), digest: match[2]!.toLowerCase() };
}

function checksumLines(text: Buffer | string): string[] {
  const lines = text.toString('utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The digests a checksum file lists, by path (its malformed lines left out: {@link verifyChecksums} names them). */
export function listedDigests(algorithm: ChecksumAlgorithm, text: Buffer | string): Map<string, string> {
  const listed = new Map<string, string>();
  for (const raw of checksumLines(text)) {
    const line = parseChecksumLine(algorithm, raw);
    if (line && !listed.has(line.path)) listed.set(line.path, line.digest);
  }
  return listed;
}

export interface VerifyChecksumsOptions {
  /** Checksum files that must be present; default both. sha256 is always checked first. */
  readonly required?: readonly ChecksumAlgorithm[];
}

/**
 * Checks every checksum file present against `files`. Returns all problems
 * (none means verified). A missing checksum file is a problem only when
 * required: StarlingX silently skipping a missing checksum.md5 is a weakness
 * we do not copy.
 */
export function verifyChecksums(files: FileSet, options: VerifyChecksumsOptions = {}): ChecksumProblem[] {
  const map = toMap(files);
  const required = new Set(options.required ?? (['sha256', 'md5'] as const));
  const problems: ChecksumProblem[] = [];
  for (const algorithm of ['sha256', 'md5'] as const) {
    const name = CHECKSUM_FILES[algorithm];
    const text = map.get(name);
    if (text === undefined) {
      if (required.has(algorithm)) problems.push({ kind: 'missing-checksum-file', checksumFile: name });
      continue;
    }
    const listed = new Set<string>();
    checksumLines(text).forEach((raw, index) => {
      const line = index + 1;
      const parsed = parseChecksumLine(algorithm, raw);
      if (!parsed) {
        problems.push({ kind: 'malformed-line', checksumFile: name, line, text: raw });
        return;
      }
      const { path } = parsed;
      if (listed.has(path)) {
        problems.push({ kind: 'duplicate-line', checksumFile: name, line, path });
        return;
      }
      listed.add(path);
      const data = map.get(path);
      if (data === undefined) {
        problems.push({ kind: 'missing-file', checksumFile: name, line, path });
        return;
      }
      const expected = parsed.digest;
      const actual = digestHex(algorithm, data);
      if (expected !== actual) problems.push({ kind: 'mismatch', checksumFile: name, line, path, expected, actual });
    });
    for (const path of [...map.keys()].sort(compareBytewise)) {
      if (!isChecksumFile(path) && !listed.has(path)) problems.push({ kind: 'not-listed', checksumFile: name, path });
    }
  }
  return problems;
}
