// Loaded with `node --import`: prints every module Node resolves for an
// import as "IMPORT <url>", and at exit every CommonJS module loaded as
// "REQUIRE <path>", on stderr, so a test can tell what a command loaded.
import { createRequire, register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(
    "export async function resolve(specifier, context, next) { const resolved = await next(specifier, context); process.stderr.write('IMPORT ' + resolved.url + '\\n'); return resolved; }",
  )}`,
);

const cache = createRequire(import.meta.url).cache;
process.on('exit', () => {
  for (const path of Object.keys(cache)) process.stderr.write(`REQUIRE ${path}\n`);
});
