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
