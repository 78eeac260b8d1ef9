/**
 * Value paths as Helm's `--set` writes them: dots between map keys, `[n]` for
 * a list item, `\.` for a dot inside a key (`annotations.nginx\.ingress\.kubernetes\.io/proxy-body-size`).
 */
import { FlotillaError } from '../diagnostics/index.js';

export type PathSegment = string | number;
export type ValuePath = readonly PathSegment[];

/** A PATH or PATH=VALUE argument that does not parse: a usage error (exit 2). */
export class PathSyntaxError extends FlotillaError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

export function parseValuePath(text: string): PathSegment[] {
  const segments: PathSegment[] = [];
  let key = '';
  let keyStarted = false;
  const endKey = () => {
    if (!keyStarted) throw new PathSyntaxError(`path "${text}": empty key (write a dot inside a key as \\.)`);
    segments.push(key);
    key = '';
    keyStarted = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\' && i + 1 < text.length) {
      key += text[++i];
      keyStarted = true;
    } else if (c === '.') {
      // `list[0].key`: the dot after an index ends nothing.
      if (keyStarted || segments.length === 0 || typeof segments[segments.length - 1] !== 'number' || text[i - 1] !== ']') endKey();
    } else if (c === '[') {
      const close = text.indexOf(']', i);
      const index = close < 0 ? '' : text.slice(i + 1, close);
      if (!/^[0-9]+$/.test(index)) throw new PathSyntaxError(`path "${text}": expected a list index such as [0] at column ${i + 1}`);
      if (keyStarted) endKey();
      else if (segments.length === 0) throw new PathSyntaxError(`path "${text}": a list index needs a key before it`);
      segments.push(Number(index));
      i = close;
    } else {
      key += c;
      keyStarted = true;
    }
  }
  if (keyStarted) endKey();
  else if (text.endsWith('.') || segments.length === 0) throw new PathSyntaxError(`path "${text}": empty key at the end`);
  return segments;
}

/** The path as the user writes it (the inverse of parseValuePath). */
export function formatValuePath(path: ValuePath): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += (out === '' ? '' : '.') + segment.replace(/\\/g, '\\\\').replace(/\./g, '\\.').replace(/\[/g, '\\[');
  }
  return out;
}

export interface Assignment {
  readonly path: PathSegment[];
  /** The text after `=`, as typed. */
  readonly raw: string;
}

/** Splits PATH=VALUE at the first `=` that is not escaped as `\=`. */
export function parseAssignment(argument: string): Assignment {
  for (let i = 0; i < argument.length; i++) {
    if (argument[i] === '\\') {
      i++;
      continue;
    }
    if (argument[i] === '=') {
      const path = argument.slice(0, i).replace(/\\=/g, '=');
      return { path: parseValuePath(path), raw: argument.slice(i + 1) };
    }
  }
  throw new PathSyntaxError(`expected PATH=VALUE, got "${argument}"`);
}
