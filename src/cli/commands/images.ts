import type { Command } from 'commander';
import { FlotillaError, formatLocation } from '../../diagnostics/index.js';
import { dumpYaml } from '../../document/index.js';
import { bumpField, bumpToRelease, checkPins, listImages, pinImages, type ImageBumpResult, type ImageInventory, type PinCheck } from '../../edit/index.js';
import { formatTable } from '../output.js';
import { showAndWrite } from './edit-output.js';
import { outputOption, printData } from '../options.js';

interface ListOptions {
  output: string;
}

interface PinCommandOptions {
  registryConfig?: string;
  insecureRegistry: string[];
  check?: boolean;
  repin?: boolean;
  release: string[];
  dryRun?: boolean;
  output: string;
}

interface BumpOptions {
  to?: string;
  field: string[];
  dryRun?: boolean;
}

export function register(program: Command): void {
  const images = program.command('images').description('list, bump and pin the image references of an app source tree');
  images
    .command('list')
    .description('each image field: its reference, where it is set and every chart value it lands in (file:line)')
    .argument('<APP_DIR>', 'app source tree')
    .option('-o, --output <FORMAT>', 'table, json or yaml', 'table')
    .action(async (appDir: string, opts: ListOptions) => {
      if (!['table', 'json', 'yaml'].includes(opts.output)) throw new FlotillaError(`--output must be table, json or yaml, got "${opts.output}"`, { exitCode: 2 });
      const inventory = await listImages(appDir);
      if (opts.output === 'json') process.stdout.write(`${JSON.stringify(inventory, null, 2)}\n`);
      else if (opts.output === 'yaml') process.stdout.write(dumpYaml(JSON.parse(JSON.stringify(inventory)) as never));
      else printInventory(inventory);
      for (const field of inventory.fields) for (const problem of field.problems) process.stderr.write(`warning: ${field.field}: ${problem}\n`);
    });
  images
    .command('bump')
    .description("rewrite image references: to another release's catalog (--to), or one field everywhere it lands (--field)")
    .argument('<APP_DIR>', 'app source tree')
    .option('--to <RELEASE>', 'every image of the current release becomes the same field of RELEASE; main.release names it')
    .option('--field <FIELD=REF>', 'set one image field everywhere it is written (repeatable)', (v: string, all: string[]) => [...all, v], [])
    .option('--dry-run', 'print the diff and write nothing')
    .action(async (appDir: string, opts: BumpOptions) => {
      if ((opts.to === undefined) === (opts.field.length === 0)) throw new FlotillaError('give either --to RELEASE or --field FIELD=REF', { exitCode: 2 });
      const result = opts.to !== undefined ? await bumpToRelease(appDir, opts.to) : await bumpField(appDir, parseFieldArguments(opts.field));
      printBump(result);
      await showAndWrite(result.changes, opts.dryRun);
    });
  images
    .command('pin')
    .description('resolve every image tag of every catalog release to its digest (name:tag@sha256:…) through the registries; --check verifies existing pins')
    .argument('<APP_DIR>', 'app source tree')
    .option('--registry-config <FILE>', 'Docker-style config.json with registry credentials (default ~/.docker/config.json)')
    .option('--insecure-registry <HOST>', 'reach this registry over plain HTTP (repeatable; loopback always is)', (v: string, all: string[]) => [...all, v], [])
    .option('--check', 'change nothing; exit 1 when a pinned digest no longer exists or a tag points elsewhere')
    .option('--repin', 'resolve already pinned references again and replace their digest')
    .option('--release <RELEASE>', 'only this catalog release (repeatable; default: every release of overrides/versions/)', (v: string, all: string[]) => [...all, v], [])
    .option('--dry-run', 'print the diff and write nothing')
    .addOption(outputOption())
    .action(async (appDir: string, opts: PinCommandOptions) => {
      const options = { registryConfig: opts.registryConfig, insecureRegistries: opts.insecureRegistry, repin: opts.repin, ...(opts.release.length > 0 ? { releases: opts.release } : {}) };
      if (opts.check) {
        const checks = await checkPins(appDir, options);
        printChecks(checks, opts.output);
        const failed = checks.filter((c) => c.status === 'digest-gone' || c.status === 'tag-moved' || c.status === 'tag-gone');
        if (failed.length > 0) {
          const moved = failed.some((c) => c.status === 'tag-moved');
          throw new FlotillaError(
            `${failed.length} pinned image${failed.length === 1 ? '' : 's'} changed in the registry: ${failed.map((c) => `${c.reference} (${c.status})`).join(', ')}` +
              (moved ? '; once the new images are checked, flotilla images pin --repin pins the digests the tags point to now' : ''),
          );
        }
        return;
      }
      const result = await pinImages(appDir, options);
      for (const image of result.pinned) process.stderr.write(`pinned ${image.reference} → ${image.digest} (${image.places.map((p) => formatLocation(p.location)).join(', ')})\n`);
      for (const image of result.skipped) process.stderr.write(`skipped ${image.reference}: ${image.reason}\n`);
      await showAndWrite(result.changes, opts.dryRun);
    });
}

function printChecks(checks: readonly PinCheck[], output: string): void {
  if (output !== 'table') {
    printData(output, checks.map((c) => ({ reference: c.reference, status: c.status, detail: c.detail, places: c.places.map((p) => formatLocation(p.location)) })), () => undefined);
    return;
  }
  const rows = checks.map((c) => [c.reference, c.status, c.detail, c.places.map((p) => formatLocation(p.location)).join(', ')]);
  console.log(formatTable(['REFERENCE', 'STATUS', 'DETAIL', 'WRITTEN AT'], rows));
}

function parseFieldArguments(args: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const arg of args) {
    const at = arg.indexOf('=');
    if (at <= 0 || at === arg.length - 1) throw new FlotillaError(`--field takes FIELD=REFERENCE, got "${arg}"`, { exitCode: 2 });
    out.set(arg.slice(0, at), arg.slice(at + 1));
  }
  return out;
}

function printInventory(inventory: ImageInventory): void {
  const rows: string[][] = [];
  for (const field of inventory.fields) {
    for (const place of field.places) {
      const what = place.kind === 'catalog' ? `catalog ${inventory.release}` : place.kind === 'static' ? `static overrides of ${place.chart}` : place.kind === 'custom' ? 'custom image' : 'template text';
      rows.push([field.field, place.reference, `set: ${what}`, formatLocation(place.location)]);
    }
    for (const landing of field.lands) {
      rows.push([field.field, field.reference ?? '-', `lands: ${landing.chart} ${landing.path}${landing.chartInApp ? '' : ' (chart not in the app)'}`, formatLocation(landing.chartDefault ?? landing.declaredAt)]);
    }
    if (field.places.length === 0 && field.lands.length === 0) rows.push([field.field, field.reference ?? '-', 'lands nowhere', '-']);
  }
  console.log(formatTable(['FIELD', 'REFERENCE', 'WHAT', 'WHERE'], rows));
  console.log(`\n${inventory.fields.length} image fields (release ${inventory.release})`);
}

function printBump(result: ImageBumpResult): void {
  for (const change of result.rewritten) process.stderr.write(`${formatLocation(change.place.location)}: ${change.field}: ${change.place.reference} → ${change.to}\n`);
  for (const note of result.notes) process.stderr.write(`note: ${note}\n`);
}
