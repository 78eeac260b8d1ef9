import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directorySource, memorySource, writeFileAtomic } from '../../src/files/index.js';
import { tempDir, writeFiles } from '../support/app-fixture.js';

describe('file sources', () => {
  it('answer the same for a folder and for the same files in memory', () => {
    const files = { 'a.yaml': 'a: 1\n', 'overrides/static/web.yaml': 'x: 1\n', 'overrides/sizes/small.yaml': 's: 1\n', 'overrides/sizes/big.yaml': 'b: 1\n' };
    const folder = directorySource(writeFiles(tempDir(), files));
    const memory = memorySource(new Map(Object.entries(files).map(([k, v]) => [k, Buffer.from(v)])), '/x/app.tgz');
    for (const source of [folder, memory]) {
      expect(source.read('overrides/static/web.yaml')?.toString()).toBe('x: 1\n');
      expect(source.read('overrides/static/none.yaml')).toBeUndefined();
      expect(source.read('overrides')).toBeUndefined();
      expect(source.kindOf('overrides/sizes')).toBe('directory');
      expect(source.kindOf('a.yaml')).toBe('file');
      expect(source.kindOf('nothing')).toBeUndefined();
      expect(source.list('overrides/sizes')).toEqual([
        { name: 'big.yaml', kind: 'file' },
        { name: 'small.yaml', kind: 'file' },
      ]);
      expect(source.list('')).toEqual([
        { name: 'a.yaml', kind: 'file' },
        { name: 'overrides', kind: 'directory' },
      ]);
      expect(source.list('missing')).toEqual([]);
    }
    expect([folder.kind, memory.kind]).toEqual(['directory', 'tarball']);
  });
});

describe('writeFileAtomic', () => {
  it('replaces a file whole, with the mode asked for, leaving no temp file', async () => {
    const dir = tempDir();
    const file = join(dir, 'state.json');
    writeFileSync(file, 'old');
    await writeFileAtomic(file, 'new', { mode: 0o600 });
    expect(readFileSync(file, 'utf8')).toBe('new');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('leaves what was there and no temp file when the write fails', async () => {
    const dir = tempDir();
    const target = join(dir, 'index.json');
    mkdirSync(target); // a folder in the way: the rename fails
    writeFileSync(join(target, 'kept'), 'old');
    await expect(writeFileAtomic(target, 'new')).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(readFileSync(join(target, 'kept'), 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['index.json']);
  });
});
