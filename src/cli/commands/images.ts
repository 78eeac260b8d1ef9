import type { Command } from 'commander';
import { FlotillaError, formatLocation } from '../../diagnostics/index.js';
import { bumpField, bumpToRelease, checkPins, listImages, pinImages, type ImageBumpResult, type ImageInventory } from '../../edit/index.js';
import type { CommandContext } from '../context.js';
import { formatTable, printData, type Output } from '../output.js';
import { showAndWrite } from './edit-output.js';
import { collect, outputOption, UsageError } from '../options.js';

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
  output: string;
}

export function register(program: Command, { io }: CommandContext): void {
  const images = program.command('images').description('list, bump and pin the image references of an app source tree');
  images
    .command('list')
    .description('each image field: its reference, where it is set and every chart value it lands in (file:line)')
    .argument('<APP_DIR>', 'app source tree')
    .addOption(outputOption())
    .action(async (appDir: string, opts: ListOptions) => {
      const inventory = await listImages(appDir);
      printData(io, opts.output, 'ImageInventory', { ...inventory }, () => inventoryTable(inventory));
      for (const field of inventory.fields) for (const problem of field.problems) io.err(`warning: ${field.field}: ${problem}`);
    });
  images
    .command('bump')
    .description("rewrite image references: to another release's catalog (--to), or one field everywhere it lands (--field)")
    .argument('<APP_DIR>', 'app source tree')
    .option('--to <RELEASE>', 'every image of the current release becomes the same field of RELEASE; main.release names it')
    .option('--field <FIELD=REF>', 'set one image field everywhere it is written (repeatable)', collect, [])
    .option('--dry-run', 'print the diff and write nothing')
    .addOption(outputOption())
    .action(async (appDir: string, opts: BumpOptions) => {
      if ((opts.to === undefined) === (opts.field.length === 0)) throw new UsageError('give either --to RELEASE or --field FIELD=REF');
      const result = opts.to !== undefined ? await bumpToRelease(appDir, opts.to) : await bumpField(appDir, parseFieldArguments(opts.field));
      printBump(result, io);
      await showAndWrite(io, opts.output, result.changes, opts.dryRun, {
        rewritten: result.rewritten.map((r) => ({ field: r.field, from: r.place.reference, to: r.to, at: formatLocation(r.place.location) })),
        notes: result.notes,
      });
    });
  images
    .command('pin')
    .description('resolve every image tag of every catalog release to its digest (name:tag@sha256:…) through the registries; --check verifies existing pins')
    .argument('<APP_DIR>', 'app source tree')
    .option('--registry-config <FILE>', 'Docker-style config.json with registry credentials (default ~/.docker/config.json)')
    .option('--insecure-registry <HOST>', 'reach this registry over plain HTTP (repeatable; loopback always is)', collect, [])
    .option('--check', 'change nothing; exit 1 when a pinned digest no longer exists or a tag points elsewhere')
    .option('--repin', 'resolve already pinned references again and replace their digest')
    .option(
      '--release <RELEASE>',
      'only this catalog release (repeatable; default: every release of overrides/versions/)',
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .option('--dry-run', 'print the diff and write nothing')
    .addOption(outputOption())
    .action(async (appDir: string, opts: PinCommandOptions) => {
      const options = {
        registryConfig: opts.registryConfig,
        insecureRegistries: opts.insecureRegistry,
        repin: opts.repin,
        ...(opts.release.length > 0 ? { releases: opts.release } : {}),
      };
      if (opts.check) {
        const checks = await checkPins(appDir, options);
        const items = checks.map((c) => ({
          reference: c.reference,
          status: c.status,
          detail: c.detail,
          places: c.places.map((p) => formatLocation(p.location)),
        }));
        printData(io, opts.output, 'PinCheckList', { items }, () =>
          formatTable(
            ['REFERENCE', 'STATUS', 'DETAIL', 'WRITTEN AT'],
            items.map((c) => [c.reference, c.status, c.detail, c.places.join(', ')]),
          ),
        );
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
      const pinned = result.pinned.map((image) => ({
        reference: image.reference,
        digest: image.digest,
        places: image.places.map((p) => formatLocation(p.location)),
      }));
      for (const image of pinned) io.err(`pinned ${image.reference} → ${image.digest} (${image.places.join(', ')})`);
      for (const image of result.skipped) io.err(`skipped ${image.reference}: ${image.reason}`);
      await showAndWrite(io, opts.output, result.changes, opts.dryRun, {
        pinned,
        skipped: result.skipped.map((s) => ({ reference: s.reference, reason: s.reason })),
      });
    });
}

function parseFieldArguments(args: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const arg of args) {
    const at = arg.indexOf('=');
    if (at <= 0 || at === arg.length - 1) throw new UsageError(`--field takes FIELD=REFERENCE, got "${arg}"`);
    out.set(arg.slice(0, at), arg.slice(at + 1));
  }
  return out;
}

function inventoryTable(inventory: ImageInventory): string[] {
  const rows: string[][] = [];
  for (const field of inventory.fields) {
    for (const place of field.places) {
      const what =
        place.kind === 'catalog'
          ? `catalog ${inventory.release}`
          : place.kind === 'static'
            ? `static overrides of ${place.chart}`
            : place.kind === 'custom'
              ? 'custom image'
              : 'template text';
      rows.push([field.field, place.reference, `set: ${what}`, formatLocation(place.location)]);
    }
    for (const landing of field.lands) {
      rows.push([
        field.field,
        field.reference ?? '-',
        `lands: ${landing.chart} ${landing.path}${landing.chartInApp ? '' : ' (chart not in the app)'}`,
        formatLocation(landing.chartDefault ?? landing.declaredAt),
      ]);
    }
    if (field.places.length === 0 && field.lands.length === 0) rows.push([field.field, field.reference ?? '-', 'lands nowhere', '-']);
  }
  return [
    formatTable(['FIELD', 'REFERENCE', 'WHAT', 'WHERE'], rows),
    `\n${inventory.fields.length} image fields${inventory.release ? ` (release ${inventory.release})` : ''}`,
  ];
}

function printBump(result: ImageBumpResult, io: Output): void {
  for (const change of result.rewritten) io.err(`${formatLocation(change.place.location)}: ${change.field}: ${change.place.reference} → ${change.to}`);
  for (const note of result.notes) io.err(`note: ${note}`);
}
