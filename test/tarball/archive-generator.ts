/**
 * Random and crafted tar streams for the differential test: mostly the
 * archives real writers make (ustar, pax, GNU long names, prefixes, folders,
 * unusual but valid names), with a share of the constructs on which tar
 * readers are known to disagree mixed in. Seeded, so a failure is replayed
 * from its seed and case number.
 */
import { paxRecord, rawHeader, rawTar, type GzipHeader, type RawEntry } from './raw-tar.js';

type Random = () => number;

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const chance = (random: Random, p: number): boolean => random() < p;

const SEGMENTS = [
  'a',
  'b',
  'charts',
  'fluxcd-manifests',
  'values.yaml',
  'café',
  'cafe\u0301',
  'ü'.repeat(45), // 90 bytes: two make a name whose 100-byte cut splits a character
  'x'.repeat(99),
  'y'.repeat(150),
  'sp ace',
  'dash-dot.tgz',
  '日本語',
  '.hidden',
];

function randomName(random: Random): string {
  const count = 1 + Math.floor(random() * 3);
  const segments = Array.from({ length: count }, () => pick(random, SEGMENTS));
  let name = segments.join(chance(random, 0.05) ? '//' : '/');
  if (chance(random, 0.08)) name = `./${name}`;
  if (chance(random, 0.01)) name = `../${name}`;
  if (chance(random, 0.01)) name = `/${name}`;
  if (chance(random, 0.01)) name = name.replace('/', '\\');
  return name;
}

function randomData(random: Random): Buffer {
  const size = pick(random, [0, 1, 17, 511, 512, 513, 1024, Math.floor(random() * 3000)]);
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i++) data[i] = Math.floor(random() * 256);
  return data;
}

const DESCRIPTIVE_RECORDS: readonly (readonly [string, string])[] = [
  ['mtime', '1700000000.123456789'],
  ['atime', '1700000000'],
  ['uid', '1000'],
  ['gname', 'staff'],
  ['uname', 'builder'],
  ['comment', 'made by a test'],
  ['SCHILY.xattr.user.note', 'hello'],
  ['SCHILY.dev', '2049'],
  ['SCHILY.ino', '123456'],
  ['SCHILY.nlink', '1'],
];

/** Records on which readers disagree, or that only some of them honour. */
const DIVISIVE_RECORDS: readonly (readonly [string, string])[] = [
  ['GNU.sparse.name', 'renamed-by-gnu-tar'],
  ['GNU.sparse.major', '1'],
  ['GNU.sparse.minor', '0'],
  ['GNU.sparse.realsize', '10'],
  ['hdrcharset', 'BINARY'],
  ['linkpath', 'elsewhere'],
  ['SCHILY.realsize', '3'],
];

const pax = (records: readonly (readonly [string, string])[]): RawEntry => ({
  name: 'PaxHeader/entry',
  type: 'x',
  data: records.map(([k, v]) => paxRecord(k, v)).join(''),
});

function octalField(value: number, width: number): Buffer {
  return Buffer.from(`${value.toString(8).padStart(width - 1, '0')}\0`, 'latin1');
}

/** The headers (and data) for one entry, the way a writer would spell its name. */
function entryBlocks(random: Random, name: string, type: string, data: Buffer, magic: 'ustar' | 'gnu'): RawEntry[] {
  const bytes = Buffer.byteLength(name);
  const extras = chance(random, 0.15) ? [pick(random, DESCRIPTIVE_RECORDS)] : [];
  const entry: RawEntry = { name, type, data, magic };
  if (bytes <= 100 && chance(random, 0.85)) return extras.length > 0 ? [pax(extras), entry] : [entry];
  // A name ustar cannot hold: GNU long name, pax path, or (ustar) the prefix field.
  const slash = name.lastIndexOf('/', 155);
  const style = magic === 'gnu' ? 'long' : pick(random, ['pax', 'pax', 'prefix', 'long']);
  const truncated = Buffer.from(name).subarray(0, 100);
  if (style === 'prefix' && slash > 0 && Buffer.byteLength(name.slice(slash + 1)) <= 100 && Buffer.byteLength(name.slice(0, slash)) <= 155) {
    return [...(extras.length > 0 ? [pax(extras)] : []), { ...entry, name: name.slice(slash + 1), prefix: name.slice(0, slash) }];
  }
  if (style === 'long' && extras.length === 0)
    return [
      { name: '././@LongLink', type: 'L', data: `${name}\0`, magic },
      { ...entry, nameBytes: truncated },
    ];
  return [pax([['path', name], ...extras]), { ...entry, nameBytes: truncated }];
}

const ENTRY_TYPES = ['0', '0', '0', '0', '0', '0', '0', '5', '5', '\0'];
/** Links, devices, contiguous and sparse files: flotilla refuses them all, so they are rare here. */
const REFUSED_TYPES = ['1', '2', '3', '6', '7', 'S', 'K', 'V'];

export interface GeneratedArchive {
  /** What was done to it, for the failure report. */
  readonly label: string;
  readonly tar: Buffer;
  /** How its gzip header is written when it is compared compressed (plain when absent). */
  readonly gzip?: GzipHeader;
}

/** One random archive: a few entries, and with some chance one disagreement-prone construct. */
export function randomArchive(random: Random): GeneratedArchive {
  const magic = chance(random, 0.2) ? 'gnu' : 'ustar';
  const blocks: RawEntry[] = [];
  const count = 1 + Math.floor(random() * 5);
  const notes: string[] = [magic];
  for (let i = 0; i < count; i++) {
    const type = chance(random, 0.03) ? pick(random, REFUSED_TYPES) : pick(random, ENTRY_TYPES);
    let name = randomName(random);
    if (type === '5' && chance(random, 0.6)) name = `${name}/`;
    if (type === '0' && chance(random, 0.02)) name = `${name}/`;
    const data = type === '0' || type === '\0' || type === '7' ? randomData(random) : Buffer.alloc(0);
    blocks.push(...entryBlocks(random, name, type, data, magic));
    if (type === '2' || type === '1') blocks[blocks.length - 1] = { ...blocks[blocks.length - 1]!, linkname: 'a' };
  }
  let tail: Buffer = Buffer.alloc(1024);
  if (chance(random, 0.4)) {
    const mutation = pick(random, MUTATIONS);
    notes.push(mutation.name);
    tail = mutation.apply(random, blocks) ?? tail;
  }
  const body = rawTar(blocks, { endMarker: false });
  const gzip = pick(random, ['plain', 'plain', 'plain', 'plain', 'plain', 'plain', 'header-crc', 'header-crc', 'wrong-header-crc'] as const);
  if (gzip !== 'plain') notes.push(gzip);
  return { label: notes.join('+'), tar: Buffer.concat([body, tail]), gzip };
}

interface Mutation {
  readonly name: string;
  /** Changes `blocks` in place; may return a different end of the archive. */
  apply(random: Random, blocks: RawEntry[]): Buffer | void;
}

const at = (random: Random, blocks: RawEntry[]): number => Math.floor(random() * blocks.length);

const MUTATIONS: readonly Mutation[] = [
  {
    name: 'two pax headers',
    apply: (random, blocks) => {
      blocks.splice(
        at(random, blocks),
        0,
        pax([
          ['path', 'first'],
          ['size', '1024'],
        ]),
        pax([['path', 'second']]),
      );
      blocks.push({ name: 'tail', data: randomData(random) });
    },
  },
  {
    name: 'pax size disagrees',
    apply: (random, blocks) => {
      const data = randomData(random);
      blocks.push(pax([['size', String(data.length + 512)]]), { name: 'sized', data, size: data.length });
      blocks.push({ name: 'after', data: Buffer.alloc(1024, 0x41) });
    },
  },
  {
    // node-tar reads pax records line by line: the line inside the value is a record of its own to it (and the outer one, whose length is wrong for one line, is dropped).
    name: 'pax value with a newline',
    apply: (random, blocks) => {
      const data = randomData(random);
      const inner = pick(random, [paxRecord('path', 'smuggled'), paxRecord('size', String(data.length + 512))]).slice(0, -1);
      blocks.push(pax([[pick(random, ['comment', 'path', 'uname']), `x\n${inner}`]]), { name: 'plain', data });
      blocks.push({ name: 'after', data: Buffer.alloc(1024, 0x41) });
    },
  },
  { name: 'divisive pax record', apply: (random, blocks) => void blocks.push(pax([pick(random, DIVISIVE_RECORDS)]), { name: 'plain', data: 'x' }) },
  {
    name: 'global header',
    apply: (random, blocks) => {
      const record = pick(random, [
        ['path', 'global'],
        ['comment', 'git archive'],
        ['mtime', '1700000000'],
        ['size', '3'],
        ['uname', 'x'],
      ] as const);
      blocks.splice(at(random, blocks), 0, { name: 'pax_global_header', type: 'g', data: paxRecord(record[0], record[1]) });
    },
  },
  {
    name: 'long name then pax',
    apply: (_, blocks) => void blocks.push({ name: '././@LongLink', type: 'L', data: 'by-long-name\0' }, pax([['path', 'by-pax']]), { name: 'n', data: 'x' }),
  },
  {
    name: 'two long names',
    apply: (_, blocks) =>
      void blocks.push({ name: '././@LongLink', type: 'L', data: 'one\0' }, { name: '././@LongLink', type: 'L', data: 'two\0' }, { name: 'n', data: 'x' }),
  },
  {
    name: 'lone zero block then entries',
    apply: (random) => Buffer.concat([Buffer.alloc(512), rawTar([{ name: 'hidden', data: randomData(random) }])]),
  },
  {
    name: 'data after the end marker',
    apply: (random) => Buffer.concat([Buffer.alloc(1024), chance(random, 0.5) ? rawTar([{ name: 'hidden', data: 'x' }]) : Buffer.from('garbage')]),
  },
  { name: 'one zero block at the end', apply: () => Buffer.alloc(512) },
  { name: 'no end marker', apply: () => Buffer.alloc(0) },
  {
    name: 'odd numeric field',
    apply: (random, blocks) => {
      const spelling = pick(random, ['\u0000000644\u0000', ' 0000644 ', '0000644\u0000x', '0000644  ', '\u00800000000', '       ']);
      const offset = pick(random, [100, 108, 116, 136, 329, 337]);
      const i = at(random, blocks);
      blocks[i] = { ...blocks[i]!, patches: [...(blocks[i]!.patches ?? []), { offset, bytes: Buffer.from(spelling, 'latin1') }] };
    },
  },
  {
    name: 'base-256 size',
    apply: (_, blocks) => {
      const size = Buffer.alloc(12);
      size[0] = 0x80;
      size.writeUInt32BE(5, 8);
      blocks.push({ name: 'big-endian', data: 'hello', patches: [{ offset: 124, bytes: size }] });
    },
  },
  { name: 'signed checksum', apply: (_, blocks) => void blocks.push({ name: 'ÿÿÿ-high-bytes', data: 'x', signedChecksum: true }) },
  { name: 'not UTF-8', apply: (_, blocks) => void blocks.push({ name: '', nameBytes: Buffer.from([0x61, 0xff, 0xfe, 0x62]), data: 'x' }) },
  {
    name: 'GNU header with atime',
    apply: (_, blocks) => void blocks.push({ name: 'n', magic: 'gnu', data: 'x', patches: [{ offset: 345, bytes: octalField(0o1234, 12) }] }),
  },
  {
    name: 'star trailer',
    apply: (_, blocks) =>
      void blocks.push({ name: 'n', prefix: 'p'.repeat(140), data: 'x', patches: [{ offset: 508, bytes: Buffer.from('tar\0', 'latin1') }] }),
  },
  { name: 'GNU header with prefix', apply: (_, blocks) => void blocks.push({ name: 'n', magic: 'gnu', prefix: 'prefix', data: 'x' }) },
  { name: 'v7 header', apply: (_, blocks) => void blocks.push({ name: 'old', magic: 'v7', data: 'x' }) },
  {
    name: 'pax spelling',
    apply: (random, blocks) => {
      const data = pick(random, [
        `${paxRecord('path', 'padded')}\0\0\0`,
        '014 path=zero\n',
        `${paxRecord('path', 'a')}${paxRecord('path', 'b')}`,
        paxRecord('path', ''),
        '99 path=short\n',
      ]);
      blocks.push({ name: 'PaxHeader/x', type: 'x', data }, { name: 'n', data: 'x' });
    },
  },
  { name: 'duplicate', apply: (_, blocks) => void blocks.push({ name: 'dup', data: '1' }, { name: './dup', data: '2' }) },
  { name: 'file with trailing slash', apply: (random, blocks) => void blocks.push({ name: 'slash/', type: pick(random, ['0', '\0']), data: '' }) },
  { name: 'folder with data', apply: (_, blocks) => void blocks.push({ name: 'd/', type: '5', data: 'smuggled' }) },
  { name: 'pax header at the end', apply: (_, blocks) => void blocks.push(pax([['path', 'orphan']])) },
  {
    name: 'truncated',
    apply: (random, blocks) => {
      const whole = rawTar(blocks, { endMarker: true });
      blocks.length = 0;
      return whole.subarray(0, Math.floor(random() * whole.length));
    },
  },
  {
    name: 'raw garbage header',
    apply: (random, blocks) => {
      const header = rawHeader({ name: 'garbage', data: 'x' });
      header[Math.floor(random() * 512)] ^= 1 << Math.floor(random() * 8);
      blocks.length = 0;
      return Buffer.concat([header, Buffer.alloc(1536)]);
    },
  },
];
