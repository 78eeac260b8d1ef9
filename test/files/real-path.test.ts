import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWithin, realpathLoose } from '../../src/files/index.js';
import { tempDir } from '../support/app-fixture.js';

describe('real paths', () => {
  it('resolve the links in the part that exists and keep the rest as written', () => {
    const root = realpathLoose(tempDir());
    mkdirSync(join(root, 'real'));
    symlinkSync(join(root, 'real'), join(root, 'link'));
    expect(realpathLoose(join(root, 'link'))).toBe(join(root, 'real'));
    expect(realpathLoose(join(root, 'link', 'not', 'made', 'yet'))).toBe(join(root, 'real', 'not', 'made', 'yet'));
    // `..` as text, as the writers' join and resolve read it (a raw string: join would do it before the call).
    mkdirSync(join(root, 'real', 'deep'));
    symlinkSync(join(root, 'real', 'deep'), join(root, 'deep-link'));
    // The file system would take deep-link/.. to real/; read as text it is root/.
    expect(realpathLoose(`${root}/deep-link/../x`)).toBe(join(root, 'x'));
    expect(realpathLoose(`${root}/not-made/../link`)).toBe(join(root, 'real'));
  });

  it('tell a folder and what lies below it from a name that only starts alike', () => {
    expect(isWithin('/a/b', '/a')).toBe(true);
    expect(isWithin('/a', '/a')).toBe(true);
    expect(isWithin('/ab', '/a')).toBe(false);
    expect(isWithin('/a', '/a/b')).toBe(false);
    expect(isWithin('/anything', '/')).toBe(true);
  });
});
