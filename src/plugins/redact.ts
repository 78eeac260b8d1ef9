/**
 * Secrets handed to plugins (generated passwords) must never be printed:
 * the host remembers every value its password store gave out, and anything
 * meant for a human (logs, `flotilla overrides`) goes through `redact`.
 */

export const REDACTED = '<secret>';

export class SecretRegistry {
  private readonly values = new Set<string>();

  add(value: string): void {
    if (value.length > 0) this.values.add(value);
  }

  get size(): number {
    return this.values.size;
  }

  /** The text with every known secret replaced, also inside longer strings (a database URL). */
  redactText(text: string): string {
    let out = text;
    for (const secret of this.values) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }

  /** A copy of a JSON-like value with secrets replaced in every string. */
  redact<T>(value: T): T {
    if (this.values.size === 0) return value;
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.redactText(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
      return v;
    };
    return walk(value) as T;
  }
}
