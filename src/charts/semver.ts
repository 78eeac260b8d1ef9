/**
 * Chart versions the way Helm reads them (Masterminds/semver "NewVersion",
 * the lenient parser): an optional `v`, one to three numeric parts, then the
 * usual pre-release and build parts. `1`, `1.2`, `v1.2.3` are valid;
 * `1.2.3-01` is not (numeric pre-release identifiers take no leading zero).
 */

export interface SemVer {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly prerelease: readonly string[];
  readonly build: string;
  /** The text it was parsed from. */
  readonly original: string;
}

const LOOSE = /^v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

export function parseVersion(text: string): SemVer | undefined {
  const m = LOOSE.exec(text);
  if (!m) return undefined;
  const nums = [m[1], m[2], m[3]].map((part) => (part === undefined ? 0 : Number(part)));
  if (nums.some((n) => !Number.isSafeInteger(n))) return undefined;
  const prerelease = m[4] === undefined ? [] : m[4].split('.');
  if (prerelease.some((id) => /^[0-9]+$/.test(id) && id.length > 1 && id.startsWith('0'))) return undefined;
  return { major: nums[0]!, minor: nums[1]!, patch: nums[2]!, prerelease, build: m[5] ?? '', original: text };
}

export function isValidVersion(text: string): boolean {
  return parseVersion(text) !== undefined;
}

function compareIdentifiers(a: string, b: string): number {
  const an = /^[0-9]+$/.test(a);
  const bn = /^[0-9]+$/.test(b);
  if (an && bn) return Math.sign(Number(a) - Number(b));
  if (an) return -1;
  if (bn) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** SemVer 2 precedence (build metadata ignored). */
export function compareVersions(a: SemVer, b: SemVer): number {
  for (const key of ['major', 'minor', 'patch'] as const) {
    if (a[key] !== b[key]) return Math.sign(a[key] - b[key]);
  }
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return a.prerelease.length === b.prerelease.length ? 0 : a.prerelease.length === 0 ? 1 : -1;
  }
  for (let i = 0; i < Math.max(a.prerelease.length, b.prerelease.length); i++) {
    if (i >= a.prerelease.length) return -1;
    if (i >= b.prerelease.length) return 1;
    const c = compareIdentifiers(a.prerelease[i]!, b.prerelease[i]!);
    if (c !== 0) return c;
  }
  return 0;
}

/**
 * Version constraints as Helm checks them (Masterminds/semver): `||` between
 * alternatives, `,` or spaces between conditions that must all hold, the
 * operators = != > < >= => <= =< ~ ~> ^, `x`/`X`/`*` or missing parts as
 * wildcards, `a - b` ranges. A pre-release version only satisfies conditions
 * that themselves name a pre-release.
 */
export interface VersionConstraint {
  readonly text: string;
  satisfiedBy(version: SemVer): boolean;
}

type Op = '' | '=' | '!=' | '>' | '<' | '>=' | '=>' | '<=' | '=<' | '~' | '~>' | '^';

interface Condition {
  readonly op: Op;
  readonly version: SemVer;
  /** A wildcard or missing part: major (all parts), minor, or patch. */
  readonly dirty: boolean;
  readonly minorDirty: boolean;
  readonly patchDirty: boolean;
}

const PART = '[0-9xX*]+';
const CVERSION = `v?${PART}(?:\\.${PART})?(?:\\.${PART})?(?:-[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?`;
const OPS = '!=|>=|=>|<=|=<|~>|=|>|<|~|\\^|';
/**
 * One condition, and what may separate two (spaces, or a comma). A group is
 * read item by item from left to right: one RegExp of the whole group
 * backtracked through every way of sharing the spaces between items, so
 * twenty conditions and a bad character took 0.1 s and forty took minutes.
 */
const ITEM_AT = new RegExp(`(${OPS})\\s*(${CVERSION})`, 'y');
const SEPARATOR_AT = /\s*,\s*|\s+/y;
// A hyphen range starts only where a version may (not inside one): with spaces around it to take, or a restart at
// every digit of a long run, the global search went quadratic (80,000 spaces: 6 s).
const RANGE = new RegExp(`(?<![0-9A-Za-z.+*-])(${CVERSION})\\s+-\\s+(${CVERSION})`, 'g');
const WILD = (part: string | undefined): boolean => part === undefined || part === 'x' || part === 'X' || part === '*';

function parseCondition(op: Op, text: string): Condition | undefined {
  const m = /^v?([0-9xX*]+)(?:\.([0-9xX*]+))?(?:\.([0-9xX*]+))?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.exec(text);
  if (!m) return undefined;
  const [, major, minor, patch, pre = ''] = m;
  let normal: string;
  let dirty = false;
  let minorDirty = false;
  let patchDirty = false;
  if (WILD(major)) {
    normal = `0.0.0${pre}`;
    dirty = true;
  } else if (WILD(minor)) {
    normal = `${major}.0.0${pre}`;
    dirty = minorDirty = true;
  } else if (WILD(patch)) {
    normal = `${major}.${minor}.0${pre}`;
    dirty = patchDirty = true;
  } else normal = `${major}.${minor}.${patch}${pre}`;
  const version = parseVersion(normal);
  return version && { op, version, dirty, minorDirty, patchDirty };
}

function tilde(v: SemVer, c: Condition): boolean {
  const k = c.version;
  if (compareVersions(v, k) < 0) return false;
  if (k.major === 0 && k.minor === 0 && k.patch === 0 && !c.minorDirty && !c.patchDirty) return true;
  if (v.major !== k.major) return false;
  return v.minor === k.minor || c.minorDirty;
}

function caret(v: SemVer, c: Condition): boolean {
  const k = c.version;
  if (compareVersions(v, k) < 0) return false;
  if (k.major > 0 || c.minorDirty) return v.major === k.major;
  if (v.major > 0) return false;
  if (k.minor > 0 || c.patchDirty) return v.minor === k.minor;
  if (v.minor > 0) return false;
  return v.patch === k.patch;
}

function holds(v: SemVer, c: Condition): boolean {
  const k = c.version;
  if (v.prerelease.length > 0 && k.prerelease.length === 0) return false;
  const cmp = compareVersions(v, k);
  switch (c.op) {
    case '':
    case '=':
      return c.dirty ? tilde(v, c) : cmp === 0;
    case '!=':
      if (!c.dirty) return cmp !== 0;
      if (v.major !== k.major) return true;
      if (c.minorDirty) return false;
      if (v.minor !== k.minor) return true;
      if (c.patchDirty) return false;
      return cmp !== 0;
    case '>':
      if (!c.dirty) return cmp > 0;
      if (v.major !== k.major) return v.major > k.major;
      if (c.minorDirty) return false;
      if (c.patchDirty) return v.minor > k.minor;
      return cmp > 0;
    case '<':
      return cmp < 0;
    case '>=':
    case '=>':
      return cmp >= 0;
    case '<=':
    case '=<':
      if (!c.dirty) return cmp <= 0;
      if (v.major > k.major) return false;
      return !(v.major === k.major && v.minor > k.minor && !c.minorDirty);
    case '~':
    case '~>':
      return tilde(v, c);
    case '^':
      return caret(v, c);
  }
}

/** The conditions of one `||` group: items separated by spaces or commas, spaces around them; undefined when it is not that. */
function parseGroup(group: string): Condition[] | undefined {
  const conditions: Condition[] = [];
  let at = group.length - group.trimStart().length;
  const end = group.trimEnd().length;
  for (;;) {
    ITEM_AT.lastIndex = at;
    const item = ITEM_AT.exec(group);
    if (!item) return undefined;
    const condition = parseCondition(item[1] as Op, item[2]!);
    if (!condition) return undefined;
    conditions.push(condition);
    at = ITEM_AT.lastIndex;
    if (at === end) return conditions;
    SEPARATOR_AT.lastIndex = at;
    if (!SEPARATOR_AT.test(group)) return undefined;
    at = SEPARATOR_AT.lastIndex;
  }
}

/** Parses a constraint; undefined when Helm would call it improper. An empty text accepts everything. */
export function parseConstraint(text: string): VersionConstraint | undefined {
  const rewritten = text.replace(RANGE, (_m, lo: string, hi: string) => `>= ${lo}, <= ${hi}`);
  if (rewritten.trim() === '') return { text, satisfiedBy: () => true };
  const groups: Condition[][] = [];
  for (const group of rewritten.split('||')) {
    const conditions = parseGroup(group);
    if (!conditions) return undefined;
    groups.push(conditions);
  }
  return { text, satisfiedBy: (v) => groups.some((conditions) => conditions.every((c) => holds(v, c))) };
}
