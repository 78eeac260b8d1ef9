import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkEntryPath, compareBytewise } from '../../src/tarball/index.js';

const sign = (n: number) => Math.sign(n);

describe('archive entry names', () => {
  it.each([
    ['charts/web-0.1.0.tgz', { ok: true, path: 'charts/web-0.1.0.tgz' }],
    ['./metadata.yaml', { ok: true, path: 'metadata.yaml' }],
    ['a//b/./c/', { ok: true, path: 'a/b/c' }],
    ['.hidden/..dots/x..', { ok: true, path: '.hidden/..dots/x..' }],
    ['./', { ok: true, path: '' }],
    ['é/日本/🙂', { ok: true, path: 'é/日本/🙂' }],
    ['a/../b', { ok: false, problem: 'parent-segment' }],
    ['..', { ok: false, problem: 'parent-segment' }],
    ['..\\x', { ok: false, problem: 'parent-segment' }],
    ['/etc/passwd', { ok: false, problem: 'absolute-path' }],
    ['C:x', { ok: false, problem: 'absolute-path' }],
    ['./C:x', { ok: false, problem: 'absolute-path' }],
    ['a\\b', { ok: false, problem: 'bad-path' }],
    ['a\u0001b', { ok: false, problem: 'bad-path' }],
    ['a\u007fb', { ok: false, problem: 'bad-path' }],
    ['a\0b', { ok: false, problem: 'bad-path' }],
  ])('%j', (raw, expected) => {
    expect(checkEntryPath(raw)).toMatchObject(expected);
  });

  it('a name it keeps is canonical: checked again it stays the same, with no empty, "." or ".." segment', () => {
    const segment = fc.constantFrom('a', 'b.c', '.', '..', '', '.x', 'x.', 'C:', 'é', '\\', '\u0001', ' ');
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), fc.boolean(), (segments, leadingSlash) => {
        const raw = `${leadingSlash ? '/' : ''}${segments.join('/')}`;
        const checked = checkEntryPath(raw);
        if (!checked.ok) return;
        expect(checkEntryPath(checked.path)).toEqual(checked);
        if (checked.path !== '') expect(checked.path.split('/').every((s) => s !== '' && s !== '.' && s !== '..')).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('byte-wise order', () => {
  it('orders strings as their UTF-8 bytes, surrogate pairs and lone surrogates included', () => {
    expect(sign(compareBytewise('\uffff', '\u{1f642}'))).toBe(-1); // EF BF BF < F0 9F 99 82, though U+FFFF > U+D83D as UTF-16
    expect(sign(compareBytewise('a', 'ab'))).toBe(-1);
    expect(compareBytewise('same', 'same')).toBe(0);
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 8 }),
        fc.string({ unit: 'binary', maxLength: 8 }),
        fc.string({ unit: 'grapheme', maxLength: 4 }),
        (a, b, prefix) => {
          const expected = sign(Buffer.compare(Buffer.from(prefix + a), Buffer.from(prefix + b)));
          expect(sign(compareBytewise(prefix + a, prefix + b))).toBe(expected);
        },
      ),
      { numRuns: 5000 },
    );
  });
});
