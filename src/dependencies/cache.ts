/**
 * The user's cache of chart archives fetched from repositories
 * (`<user cache>/chart-dependencies/`), kept through the one cache module
 * (src/cache): the folder held to the folder rule, every entry sealed under
 * this user's cache key. For each repository and chart name, an entry lists
 * the versions seen and the sha256 of each archive; each archive is an
 * entry of its own, looked up by that digest and hashed again when read.
 * Nothing planted by anyone without the key (a shared or restored cache
 * folder) is used: an entry that does not open counts as missing, and the
 * archive is fetched again (or, offline, the build says it is missing).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { CacheFolder, type CacheNotes } from '../cache/index.js';
import { userCacheDir } from '../files/index.js';

const REFS_KIND = 'chart-refs';
const ARCHIVE_KIND = 'chart-archive';

export function defaultDependencyCacheDir(): string {
  return join(userCacheDir(), 'chart-dependencies');
}

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');
const DIGEST = /^sha256:([0-9a-f]{64})$/;

export class DependencyCache {
  /** Undefined when the folder may not be used (another user's, open to others, no cache key): nothing is read or kept. */
  private readonly folder: CacheFolder | undefined;

  constructor(
    readonly dir: string,
    note?: CacheNotes,
  ) {
    this.folder = CacheFolder.open(dir, note);
  }

  private static refsName(repository: string, name: string): string {
    return `refs-${sha256(JSON.stringify([repository, name]))}`;
  }

  /** The versions of `name` from `repository` the cache holds an entry for (version → digest); none when unreadable. */
  async versions(repository: string, name: string): Promise<ReadonlyMap<string, string>> {
    const bytes = await this.folder?.read(DependencyCache.refsName(repository, name), REFS_KIND, JSON.stringify([repository, name]));
    if (bytes === undefined) return new Map();
    try {
      const versions = JSON.parse(bytes.toString('utf8')) as unknown;
      if (versions === null || typeof versions !== 'object' || Array.isArray(versions)) return new Map();
      return new Map(Object.entries(versions).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && DIGEST.test(entry[1])));
    } catch {
      return new Map();
    }
  }

  /** The archive stored under `digest`, only when its entry opens and its bytes still hash to it. */
  async archive(digest: string): Promise<Buffer | undefined> {
    const hex = DIGEST.exec(digest)?.[1];
    if (hex === undefined) return undefined;
    const bytes = await this.folder?.read(`archive-${hex}`, ARCHIVE_KIND, digest);
    return bytes !== undefined && `sha256:${sha256(bytes)}` === digest ? bytes : undefined;
  }

  /** Stores an archive and records it as `version` of `name` from `repository`; returns its digest. */
  async store(repository: string, name: string, version: string, bytes: Buffer): Promise<string> {
    const digest = `sha256:${sha256(bytes)}`;
    if (!this.folder) return digest;
    await this.folder.write(`archive-${sha256(bytes)}`, ARCHIVE_KIND, digest, bytes);
    const versions = Object.fromEntries(await this.versions(repository, name));
    versions[version] = digest;
    await this.folder.write(DependencyCache.refsName(repository, name), REFS_KIND, JSON.stringify([repository, name]), JSON.stringify(versions));
    return digest;
  }
}
