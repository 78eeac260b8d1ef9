/**
 * Flux manifests as written by the previous build. Dumping YAML is the
 * costliest part of writing fluxcd-manifests/ (two documents per release),
 * and after a one-file edit nearly all of them are the same as last time:
 * each is looked up by its JSON form, which is quick to make and stands for
 * the value exactly (manifests are plain data), and dumped only when new.
 * The file keeps just what the last build used.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { dumpYaml } from '../document/index.js';
import { writeFileAtomic } from '../files/index.js';

/** Bumped when the YAML writer's output for the same value may change. */
const FORMAT = 'flotilla-manifest-cache/1';
const FILE = 'manifests.json';

export class ManifestCache {
  /** What this build dumped or looked up: all the next build needs. */
  readonly used = new Map<string, string>();
  private changed = false;

  private constructor(
    private readonly dir: string,
    private readonly previous: ReadonlyMap<string, string>,
  ) {}

  /** The cache in `dir`; `kept`, what the same process's last build used (see `used`), instead of reading the file. */
  static open(dir: string, kept?: ReadonlyMap<string, string>): ManifestCache {
    if (kept) return new ManifestCache(dir, kept);
    const file = join(dir, FILE);
    let previous = new Map<string, string>();
    try {
      const stored = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { format?: string; yaml?: Record<string, string> }) : undefined;
      if (stored?.format === FORMAT && stored.yaml) previous = new Map(Object.entries(stored.yaml));
    } catch {
      // a damaged cache only costs dumping everything again
    }
    return new ManifestCache(dir, previous);
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
    await mkdir(this.dir, { recursive: true });
    await writeFileAtomic(join(this.dir, FILE), JSON.stringify({ format: FORMAT, yaml: Object.fromEntries(this.used) }), { durable: false });
  }
}
