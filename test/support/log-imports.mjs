// Loaded with `node --import`: prints every module Node resolves as
// "IMPORT <url>" on stderr, so a test can tell what a command loaded.
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(
    "export async function resolve(specifier, context, next) { const resolved = await next(specifier, context); process.stderr.write('IMPORT ' + resolved.url + '\\n'); return resolved; }",
  )}`,
);
