/**
 * The parse memo (src/document memo.ts) kept in a cache folder — the
 * build's `<out>/.flotilla-cache` — so a new process parses only the files
 * that changed since the last one. The memo last used stays in memory too:
 * `build --watch` builds again in the same process, without reading it back.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ParseMemo } from '../document/index.js';
import { writeFileAtomic } from '../files/index.js';

const MEMO_FILE = 'parsed-yaml.bin';

interface Kept {
  readonly file: string;
  readonly memo: ParseMemo;
  /** The file's stat when it last held this memo: another writer changes it. */
  readonly print: string | undefined;
}

let kept: Kept | undefined;

async function printOf(file: string): Promise<string | undefined> {
  const info = await stat(file).catch(() => undefined);
  return info && `${info.ino}:${info.size}:${info.mtimeMs}`;
}

/** The memo kept in `cacheDir` (an empty one when there is none, or none readable). */
export async function openParseMemo(cacheDir: string): Promise<ParseMemo> {
  const file = join(resolve(cacheDir), MEMO_FILE);
  const print = await printOf(file);
  if (kept?.file === file && kept.print === print) return kept.memo;
  const memo = ParseMemo.decode(await readFile(file).catch(() => undefined));
  kept = { file, memo, print };
  return memo;
}

/** Writes the memo back to `cacheDir` when this run parsed something new. */
export async function saveParseMemo(cacheDir: string, memo: ParseMemo): Promise<void> {
  const bytes = memo.encode();
  if (!bytes) return;
  const dir = resolve(cacheDir);
  const file = join(dir, MEMO_FILE);
  await mkdir(dir, { recursive: true });
  await writeFileAtomic(file, bytes, { durable: false });
  kept = { file, memo, print: await printOf(file) };
}
