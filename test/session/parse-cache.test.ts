import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CacheFolder } from '../../src/cache/index.js';
import { ParseMemo } from '../../src/yaml/index.js';
import { openParseMemo, saveParseMemo } from '../../src/session/parse-cache.js';
import { tempDir } from '../support/app-fixture.js';

const OPTIONS = { layer: 'static' };

describe('the parse memo in a cache folder', () => {
  it('stays in memory from one build to the next in a process, and is read again when another run rewrote it', async () => {
    const cache = CacheFolder.open(join(tempDir(), '.flotilla-cache'))!;
    const memo = await openParseMemo(cache);
    memo.parse('a: 1\n', 'a.yaml', OPTIONS);
    await saveParseMemo(cache, memo);
    const file = join(cache.dir, 'parsed-yaml.bin');
    expect(existsSync(file)).toBe(true);

    // `build --watch`: the same memo, not read back.
    const again = await openParseMemo(cache);
    expect(again).toBe(memo);
    again.parse('a: 1\n', 'a.yaml', OPTIONS);
    expect(again.parsedFiles).toEqual([]);
    const before = readFileSync(file);
    await saveParseMemo(cache, again); // nothing new: not rewritten
    expect(readFileSync(file).equals(before)).toBe(true);

    // Another process wrote the memo meanwhile: what it kept is read.
    const other = ParseMemo.empty();
    other.parse('b: 2\n', 'b.yaml', OPTIONS);
    await cache.write('parsed-yaml.bin', 'parse-memo', 'flotilla-parse-memo', other.encode()!);
    const reread = await openParseMemo(cache);
    expect(reread).not.toBe(memo);
    reread.parse('b: 2\n', 'b.yaml', OPTIONS);
    reread.parse('a: 1\n', 'a.yaml', OPTIONS);
    expect(reread.parsedFiles).toEqual(['a.yaml']);
  });

  it('starts empty when the folder or the file is not there or not readable as a memo', async () => {
    const cache = CacheFolder.open(join(tempDir(), 'no', 'such', 'folder'))!;
    const memo = await openParseMemo(cache);
    memo.parse('a: 1\n', 'a.yaml', OPTIONS);
    expect(memo.parsedFiles).toEqual(['a.yaml']);
    await saveParseMemo(cache, memo); // creates the folder
    writeFileSync(join(cache.dir, 'parsed-yaml.bin'), 'not a memo');
    const fresh = await openParseMemo(cache);
    fresh.parse('a: 1\n', 'a.yaml', OPTIONS);
    expect(fresh.parsedFiles).toEqual(['a.yaml']);
  });
});
