#!/usr/bin/env node
// Bundles the Kubernetes client library (@kubernetes/client-node) into one
// minified ES module, dist/cli/kubernetes-client.mjs, which src/kube loads
// when a command first talks to a cluster: the package's ~950 modules take
// half a second to load one by one, the one file a tenth. Its dependencies
// are bundled with it; flotilla's own copies are not shared with it.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await build({
  stdin: { contents: "export * from '@kubernetes/client-node';", resolveDir: root, sourcefile: 'kubernetes-client.js', loader: 'js' },
  outfile: join(root, 'dist', 'cli', 'kubernetes-client.mjs'),
  bundle: true,
  minify: true,
  keepNames: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Some of its dependencies are CommonJS and call require(); give the bundle one.
  banner: { js: "import { createRequire as kubernetesClientRequire } from 'node:module';\nconst require = kubernetesClientRequire(import.meta.url);" },
  legalComments: 'linked',
  logLevel: 'warning',
});
