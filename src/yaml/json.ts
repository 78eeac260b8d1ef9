/**
 * JSON files of an app or a tarball (features schema, plugin manifest), read
 * so that a mistake is reported at its file, line and column like a YAML one.
 */
import { FlotillaError, type SourceLocation } from '../diagnostics/index.js';

export class JsonSyntaxError extends FlotillaError {}

/** Line and column of a character offset (1-based). */
function locate(text: string, offset: number, file: string): SourceLocation {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const line = before.split('\n').length;
  return { file, line, column: before.length - before.lastIndexOf('\n') };
}

export function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    // V8 says where: "… in JSON at position 42" (sometimes also "(line 3 column 5)").
    const position = /at position (\d+)/.exec(message);
    const reason = message.replace(/ in JSON at position \d+.*$/s, '').replace(/^JSON\.parse: /, '');
    throw new JsonSyntaxError(`invalid JSON: ${reason}`, { location: position ? locate(text, Number(position[1]), file) : { file, line: 1, column: 1 } });
  }
}
