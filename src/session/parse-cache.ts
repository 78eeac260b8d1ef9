/**
 * The parse memo (src/yaml memo.ts) kept in a cache folder — the
 * build's `<out>/.flotilla-cache` — so a new process parses only the files
 * that changed since the last one. The memo last used stays in memory too:
 * `build --watch` builds again in the same process, without reading it back.
 */
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { CacheFolder } from '../cache/index.js';
import { ParseMemo } from '../yaml/index.js';

const MEMO_FILE = 'parsed-yaml.bin';
/** The memo checks its own format and parser; the entry's inputs name the file's role. */
const MEMO_INPUTS = 'flotilla-parse-memo';

interface Kept {
  readonly file: string;
  readonly memo: ParseMemo;
  /** The file's stat when it last held this memo: another writer changes it. */
  readonly fingerprint: string | undefined;
}

let kept: Kept | undefined;

async function fingerprintOf(file: string): Promise<string | undefined> {
  const info = await stat(file).catch(() => undefined);
  return info && `${info.ino}:${info.size}:${info.mtimeMs}`;
}

/** The memo kept in `cache` (an empty one when there is none, or none that passes its checks). */
export async function openParseMemo(cache: CacheFolder): Promise<ParseMemo> {
  const file = join(resolve(cache.dir), MEMO_FILE);
  const fingerprint = await fingerprintOf(file);
  if (kept?.file === file && kept.fingerprint === fingerprint) return kept.memo;
  const memo = ParseMemo.decode(await cache.read(MEMO_FILE, 'parse-memo', MEMO_INPUTS));
  kept = { file, memo, fingerprint };
  return memo;
}

/** Writes the memo back to `cache` when this run parsed something new. */
export async function saveParseMemo(cache: CacheFolder, memo: ParseMemo): Promise<void> {
  const bytes = memo.encode();
  if (!bytes) return;
  const file = join(resolve(cache.dir), MEMO_FILE);
  await cache.write(MEMO_FILE, 'parse-memo', MEMO_INPUTS, bytes);
  kept = { file, memo, fingerprint: await fingerprintOf(file) };
}
