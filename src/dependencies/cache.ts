/**
 * The user's cache of chart archives fetched from repositories
 * (`<user cache>/chart-dependencies/`): each archive stored under its own
 * sha256 (`blobs/sha256/<hex>`), and for each repository and chart name the
 * versions seen and their digests (`refs/<sha256 of repository and name>.json`).
 * The cache holds no authority: an archive is read only through the digest
 * a ref names, and its bytes are hashed on every read; one that does not
 * match (torn, altered) counts as missing, as does a ref that cannot be
 * read whole.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { userCacheDir, writeFileAtomic } from '../files/index.js';

const REFS_FORMAT = 'flotilla-chart-refs/1';

interface RefsFile {
  readonly format: typeof REFS_FORMAT;
  readonly repository: string;
  readonly name: string;
  /** version → `sha256:<hex>` of its archive */
  readonly versions: Record<string, string>;
}

export function defaultDependencyCacheDir(): string {
  return join(userCacheDir(), 'chart-dependencies');
}

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');
const DIGEST = /^sha256:([0-9a-f]{64})$/;

export class DependencyCache {
  constructor(readonly dir: string) {}

  private refsFile(repository: string, name: string): string {
    return join(this.dir, 'refs', `${sha256(JSON.stringify([repository, name]))}.json`);
  }

  private blobFile(digest: string): string | undefined {
    const hex = DIGEST.exec(digest)?.[1];
    return hex === undefined ? undefined : join(this.dir, 'blobs', 'sha256', hex);
  }

  /** The versions of `name` from `repository` the cache holds an entry for (version → digest); none when unreadable. */
  async versions(repository: string, name: string): Promise<ReadonlyMap<string, string>> {
    try {
      const refs = JSON.parse(await readFile(this.refsFile(repository, name), 'utf8')) as Partial<RefsFile> | null;
      if (refs?.format !== REFS_FORMAT || refs.repository !== repository || refs.name !== name || typeof refs.versions !== 'object' || refs.versions === null) return new Map();
      return new Map(Object.entries(refs.versions).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && DIGEST.test(entry[1])));
    } catch {
      return new Map();
    }
  }

  /** The archive stored under `digest`, only when its bytes still hash to it. */
  async archive(digest: string): Promise<Buffer | undefined> {
    const file = this.blobFile(digest);
    if (file === undefined) return undefined;
    const bytes = await readFile(file).catch(() => undefined);
    return bytes !== undefined && `sha256:${sha256(bytes)}` === digest ? bytes : undefined;
  }

  /** Stores an archive and records it as `version` of `name` from `repository`; returns its digest. */
  async store(repository: string, name: string, version: string, bytes: Buffer): Promise<string> {
    const digest = `sha256:${sha256(bytes)}`;
    const file = this.blobFile(digest)!;
    await mkdir(join(this.dir, 'blobs', 'sha256'), { recursive: true, mode: 0o700 });
    await writeFileAtomic(file, bytes, { durable: false });
    await mkdir(join(this.dir, 'refs'), { recursive: true, mode: 0o700 });
    const versions = Object.fromEntries(await this.versions(repository, name));
    versions[version] = digest;
    const refs: RefsFile = { format: REFS_FORMAT, repository, name, versions };
    await writeFileAtomic(this.refsFile(repository, name), JSON.stringify(refs), { durable: false });
    return digest;
  }
}
