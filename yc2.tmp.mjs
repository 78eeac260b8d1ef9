import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
const which = process.argv[2];
const files = [];
const walk = (d) => { for (const e of readdirSync(d)) { const p = join(d, e); if (statSync(p).isDirectory()) walk(p); else if (/\.ya?ml$/.test(e) && !p.includes('/templates/')) files.push(p); } };
walk('/tmp/b14/app');
const texts = files.map((f) => readFileSync(f, 'utf8'));
const Y = await import('yaml'); const J = await import('js-yaml');
const run = () => { if (which === 'yaml') for (const t of texts) Y.parseDocument(t, { version: '1.1' }); else if (which === 'events') for (const t of texts) J.parseEvents(t, {}); else if (which === 'load') for (const t of texts) J.load(t, { schema: J.YAML11_SCHEMA }); };
for (let k = 0; k < 4; k++) { const t = performance.now(); run(); console.log(which, k, (performance.now() - t).toFixed(1)); }
