/**
 * Flux manifests as written by the previous build. Dumping YAML is the
 * costliest part of writing fluxcd-manifests/ (two documents per release),
 * and after a one-file edit nearly all of them are the same as last time:
 * each is looked up by its JSON form, which is quick to make and stands for
 * the value exactly (manifests are plain data), and dumped only when new.
 * The file keeps just what the last build used.
 */
import type { CacheFolder } from '../cache/index.js';
import { dumpYaml } from '../yaml/index.js';

/** Bumped when the YAML writer's output for the same value may change. */
const FORMAT = 'flotilla-manifest-cache/2';
const FILE = 'manifests.json';

export class ManifestCache {
  /** What this build dumped or looked up: all the next build needs. */
  readonly used = new Map<string, string>();
  private changed = false;

  private constructor(
    private readonly cache: CacheFolder,
    private readonly previous: ReadonlyMap<string, string>,
  ) {}

  /** The cache in `cache`; `kept`, what the same process's last build used (see `used`), instead of reading the file. */
  static open(cache: CacheFolder, kept?: ReadonlyMap<string, string>): ManifestCache {
    if (kept) return new ManifestCache(cache, kept);
    let previous = new Map<string, string>();
    try {
      const content = cache.readSync(FILE, 'manifests', FORMAT);
      const stored = content && (JSON.parse(content.toString('utf8')) as { yaml?: Record<string, unknown> } | null);
      if (stored?.yaml) previous = new Map(Object.entries(stored.yaml).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    } catch {
      // a damaged cache only costs dumping everything again
    }
    return new ManifestCache(cache, previous);
  }

  /** {@link dumpYaml}, or the text it gave last build for the same value. */
  readonly dump = (value: unknown): string => {
    const key = JSON.stringify(value);
    let text = this.used.get(key) ?? this.previous.get(key);
    if (text === undefined) {
      text = dumpYaml(value);
      this.changed = true;
    }
    this.used.set(key, text);
    return text;
  };

  async save(): Promise<void> {
    if (!this.changed && this.used.size === this.previous.size) return;
    await this.cache.write(FILE, 'manifests', FORMAT, JSON.stringify({ yaml: Object.fromEntries(this.used) }));
  }
}
