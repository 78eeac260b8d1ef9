/**
 * The offline stores: passwords and records kept as JSON files in a state
 * folder outside the app source tree (so nothing secret lands in git), by
 * default $FLOTILLA_STATE_DIR, else $XDG_STATE_HOME/flotilla, else
 * ~/.local/state/flotilla, then one folder per app. Files are 0600 and
 * replaced atomically (write, then rename).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../files/index.js';
import type { JsonValue, PasswordStore, RecordStore } from './context.js';
import { PluginError } from './errors.js';
import { checkPasswordName, generatePassword } from './passwords.js';

export function defaultStateDir(appName: string): string {
  const base = process.env.FLOTILLA_STATE_DIR ?? join(process.env.XDG_STATE_HOME ?? join(homedir(), '.local', 'state'), 'flotilla');
  return join(base, appName);
}

/** A JSON object in a file; updates in one process are serialised. */
class JsonFile {
  private queue: Promise<unknown> = Promise.resolve();
  constructor(readonly path: string) {}

  async read(): Promise<Record<string, JsonValue>> {
    if (!existsSync(this.path)) return {};
    const text = await readFile(this.path, 'utf8');
    try {
      const data: unknown = JSON.parse(text);
      if (typeof data === 'object' && data !== null && !Array.isArray(data)) return data as Record<string, JsonValue>;
    } catch {
      // reported below
    }
    throw new PluginError(`${this.path} is not a JSON object; fix or delete it`);
  }

  /** Read, change, write: one at a time, so two hooks of one run do not lose each other's update. */
  update<T>(change: (data: Record<string, JsonValue>) => { result: T; write: boolean }): Promise<T> {
    const next = this.queue.then(async () => {
      const data = await this.read();
      const { result, write } = change(data);
      if (write) {
        await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
        await writeFileAtomic(this.path, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
      }
      return result;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}

export class LocalPasswordStore implements PasswordStore {
  private readonly file: JsonFile;
  constructor(path: string) {
    this.file = new JsonFile(path);
  }

  async getOrGenerate(name: string, options: { readonly length?: number } = {}): Promise<string> {
    checkPasswordName(name);
    return this.file.update((data) => {
      const known = data[name];
      if (typeof known === 'string') return { result: known, write: false };
      const value = generatePassword(options.length);
      data[name] = value;
      return { result: value, write: true };
    });
  }
}

export class LocalRecordStore implements RecordStore {
  private readonly file: JsonFile;
  constructor(path: string) {
    this.file = new JsonFile(path);
  }

  async get(key: string): Promise<JsonValue | undefined> {
    return (await this.file.read())[key];
  }

  set(key: string, value: JsonValue): Promise<void> {
    return this.file.update((data) => {
      data[key] = value;
      return { result: undefined, write: true };
    });
  }

  delete(key: string): Promise<void> {
    return this.file.update((data) => {
      const had = key in data;
      delete data[key];
      return { result: undefined, write: had };
    });
  }
}
