/**
 * A set of file edits computed before anything is written: shown as a unified
 * diff, then written each atomically (temp file + rename), or not at all with
 * `--dry-run`. Every file is read, edited and checked first, so one refused
 * edit leaves all files as they were.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { FlotillaError } from '../diagnostics/index.js';
import { writeFileAtomic } from '../files/index.js';
import { YamlFileEditor, type EditRecord } from './yaml-edit.js';

export interface FileChange {
  /** Absolute path. */
  readonly path: string;
  /** How messages name it: relative to the app root. */
  readonly file: string;
  /** The text as read; undefined for a file the edit creates. */
  readonly before: string | undefined;
  readonly after: string;
  readonly edits: readonly EditRecord[];
}

export class ConcurrentChangeError extends FlotillaError {}

/** `git diff`-style unified diff of one change (empty when nothing changed). */
export function unifiedDiff(change: FileChange): string {
  if (change.before === change.after) return '';
  const from = change.before === undefined ? '/dev/null' : `a/${change.file}`;
  return createTwoFilesPatch(from, `b/${change.file}`, change.before ?? '', change.after, undefined, undefined, { context: 3 })
    .split('\n')
    .filter((line) => !line.startsWith('====='))
    .join('\n');
}

/** Writes one file atomically with the mode it had (docs/architecture.md, "Shared helpers"), creating its folder for a new file. */
async function writeChange(change: FileChange): Promise<void> {
  const mode = await stat(change.path).then(
    (s) => s.mode & 0o7777,
    () => undefined,
  );
  await mkdir(dirname(change.path), { recursive: true });
  await writeFileAtomic(change.path, change.after, { mode });
}

/** Writes the changed files; a file changed on disk since it was read is refused before anything is written. */
export async function writeChanges(changes: readonly FileChange[]): Promise<void> {
  const changed = changes.filter((c) => c.before !== c.after);
  for (const change of changed) {
    const now = await readFile(change.path, 'utf8').catch(() => undefined);
    if (now !== change.before)
      throw new ConcurrentChangeError(`${change.file} changed on disk while it was being edited; nothing was written, run the command again`);
  }
  for (const change of changed) await writeChange(change);
}

/** Replacements of exact text in a file that is not YAML (a values template), keyed by offset. */
class TextFileEditor {
  readonly records: EditRecord[] = [];
  readonly #replacements = new Map<number, { length: number; text: string }>();

  constructor(
    readonly original: string,
    readonly file: string,
  ) {}

  replace(offset: number, length: number, text: string, what: string): void {
    const line = this.original.slice(0, offset).split('\n').length;
    this.#replacements.set(offset, { length, text });
    this.records.push({ path: [what], before: this.original.slice(offset, offset + length), after: text, line, action: 'set' });
  }

  get text(): string {
    let out = this.original;
    for (const [offset, { length, text }] of [...this.#replacements].sort((a, b) => b[0] - a[0]))
      out = out.slice(0, offset) + text + out.slice(offset + length);
    return out;
  }
}

/** The editors of several files of one app, each read once; `changes()` says what would be written. */
export class ChangeSet {
  readonly #files = new Map<string, { path: string; before: string | undefined; editor: YamlFileEditor | TextFileEditor }>();

  constructor(private readonly resolvePath: (file: string) => string) {}

  async yaml(file: string): Promise<YamlFileEditor> {
    const entry = this.#files.get(file) ?? (await this.#open(file, (text) => new YamlFileEditor(text, file)));
    if (!(entry.editor instanceof YamlFileEditor)) throw new Error(`${file} is open as text`);
    return entry.editor;
  }

  async textFile(file: string): Promise<TextFileEditor> {
    const entry = this.#files.get(file) ?? (await this.#open(file, (text) => new TextFileEditor(text, file)));
    if (!(entry.editor instanceof TextFileEditor)) throw new Error(`${file} is open as YAML`);
    return entry.editor;
  }

  async #open(file: string, make: (text: string) => YamlFileEditor | TextFileEditor) {
    const path = this.resolvePath(file);
    const before = await readFile(path, 'utf8');
    const entry = { path, before, editor: make(before) };
    this.#files.set(file, entry);
    return entry;
  }

  changes(): FileChange[] {
    return [...this.#files].map(([file, { path, before, editor }]) => ({ path, file, before, after: editor.text, edits: editor.records }));
  }
}
