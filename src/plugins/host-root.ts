import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder holding flotilla's modules: src/ when run from sources, dist/ once built (the CLI bundle sits in dist/cli/ like a compiled module). */
export const HOST_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
