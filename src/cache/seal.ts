/**
 * The one format of a cache entry, for every cache flotilla keeps (build
 * caches under `<out>/.flotilla-cache/`, the CLI's code cache):
 *
 *     flotilla-cache/1 <kind> <input key> <mac>\n<content>
 *
 * `input key` is the digest of what the content was made from (the reader
 * looks an entry up by it); `mac` is an HMAC-SHA256, under this user's
 * cache key, of the kind, the input key and the sha256 of the content. The
 * reader hashes the content it is about to use and checks the MAC: a
 * digest kept in the entry itself would vouch for nothing (whoever wrote
 * the content would write its digest too), and an entry planted by anyone
 * without the key — a cache folder from a pull request or a shared CI cache
 * — never matches. The key (32 random bytes) lives in the user cache
 * folder, held to the private folder rule (folder.ts), made on first use.
 *
 * Node's built-ins only: the CLI's code cache uses it before flotilla loads.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, linkSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { userCacheDir } from '../files/index.js';
import { folderProblem } from './folder.js';

const MAGIC = 'flotilla-cache/1';
const KEY_FILE = 'cache.key';
const KEY_BYTES = 32;
/** Kinds and input keys are written on the entry's first line: no spaces or line breaks. */
const WORD = /^[A-Za-z0-9._:/+=-]{1,200}$/;

let userKey: Buffer | undefined;

/**
 * This user's cache key; a reason string when there is none: the user cache
 * folder breaks the folder rule, or (unless `create`, as a writer asks) no
 * key was made yet.
 */
export function cacheKey(options: { readonly create?: boolean } = { create: true }): Buffer | string {
  if (userKey) return userKey;
  const key = loadKey(userCacheDir(), options.create === true);
  if (typeof key !== 'string') userKey = key;
  return key;
}

function loadKey(dir: string, create: boolean): Buffer | string {
  const problem = folderProblem(dir, { create, private: true });
  if (problem) return `no cache key: ${problem}`;
  const file = join(dir, KEY_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const key = readFileSync(file);
      if (key.length === KEY_BYTES) return key;
      return `no cache key: ${file} is not ${KEY_BYTES} bytes`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return `no cache key: ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
      if (!create) return `no cache key yet (${file})`;
    }
    // Written whole under a name of its own, then linked in: two processes starting at once agree on the one linked first.
    const temp = join(dir, `.${KEY_FILE}.${randomBytes(8).toString('hex')}`);
    try {
      const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try {
        writeSync(fd, randomBytes(KEY_BYTES));
      } finally {
        closeSync(fd);
      }
      linkSync(temp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return `no cache key: ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
    } finally {
      rmSync(temp, { force: true });
    }
  }
  return `no cache key: ${file} could not be made`;
}

function mac(key: Buffer, kind: string, inputKey: string, content: Uint8Array): Buffer {
  const digest = createHash('sha256').update(content).digest();
  return createHmac('sha256', key).update(`${MAGIC}\0${kind}\0${inputKey}\0`).update(digest).digest();
}

/** The entry's bytes: header line, then the content. */
export function sealEntry(kind: string, inputKey: string, content: Uint8Array, key: Buffer): Buffer {
  if (!WORD.test(kind) || !WORD.test(inputKey)) throw new Error(`cache entry kind and key must be single words: ${JSON.stringify([kind, inputKey])}`);
  return Buffer.concat([Buffer.from(`${MAGIC} ${kind} ${inputKey} ${mac(key, kind, inputKey, content).toString('hex')}\n`, 'latin1'), content]);
}

/** The content of an entry of `kind` made from `inputKey`, or why it is not one (another format, kind or input, or content its MAC does not vouch for). */
export function openEntry(bytes: Buffer, kind: string, inputKey: string, key: Buffer): { readonly content: Buffer } | { readonly problem: string } {
  const end = bytes.indexOf(0x0a);
  const header = end < 0 || end > 600 ? [] : bytes.toString('latin1', 0, end).split(' ');
  if (header.length !== 4 || header[0] !== MAGIC) return { problem: 'not a flotilla cache entry' };
  if (header[1] !== kind) return { problem: `an entry of ${header[1]}, not ${kind}` };
  if (header[2] !== inputKey) return { problem: 'made from other inputs' };
  const content = bytes.subarray(end + 1);
  const expected = mac(key, kind, inputKey, content);
  const given = Buffer.from(header[3]!, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { problem: 'its content is not what this user wrote (digest check failed)' };
  return { content };
}
