/**
 * `flotilla version status | target | image`: the version model of an app
 * on a cluster (docs/versions.md). Each parses, calls src/lifecycle, prints.
 */
import type { Command } from 'commander';
import type { VersionStatus } from '../../lifecycle/index.js';
import type { CustomImage } from '../../catalog/index.js';
import type { CommandContext } from '../context.js';
import { formatTable, printData } from '../output.js';
import { clusterCommand, collect, type ClusterFlags } from '../options.js';
import { connectFor } from './cluster-options.js';
import { registerContinue } from './version-continue.js';

/** Every cluster command's flags: the cluster's, and -o. */
type Flags = ClusterFlags & { readonly output: string };

function statusTable(status: VersionStatus): string {
  const releases = status.available.map((a) => `${a.release}${a.inBundle ? '' : ` (known from ${a.bundle})`}`);
  const head = [
    `app:        ${status.app}`,
    `target:     ${status.target || '-'}${status.targetSet ? ` (set ${status.targetSet.at} by ${status.targetSet.by})` : " (the deployment spec's main.release)"}`,
    `deployed:   ${status.deployed ?? '-'}`,
    `available:  ${releases.join(', ') || '-'}`,
    ...(status.phase ? [`phase:      ${status.phase}`] : []),
    ...(status.held ? [`held:       ${status.held} (flotilla version continue ${status.app} --phase ${status.held})`] : []),
  ].join('\n');
  const defaults = formatTable(
    ['SERVICE DEFAULT', 'VALUE', 'SOURCE'],
    Object.entries(status.serviceDefaults).map(([name, d]) => [name, String(d.value), d.source]),
  );
  const images = formatTable(
    ['IMAGE FIELD', 'REFERENCE', 'SOURCE'],
    Object.entries(status.images).map(([field, image]) => [field, image.reference, image.source]),
  );
  return `${head}\n\n${defaults}\n\n${images}`;
}

function customImagesTable(images: Readonly<Record<string, CustomImage>>): string {
  const rows = Object.entries(images)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([field, image]) => [field, image.reference, image.set, image.by]);
  return rows.length === 0 ? 'no custom images set' : formatTable(['FIELD', 'REFERENCE', 'SET', 'BY'], rows);
}

export function register(program: Command, { io }: CommandContext): void {
  const version = program
    .command('version')
    .description('the OpenStack versions of an app on a cluster: available, target, deployed, custom images, the staged update (docs/versions.md)');
  registerContinue(version, io);

  clusterCommand(version, 'status', 'target, deployed and available releases, the update phase, and each image with where it comes from')
    .argument('<APP>', 'app name')
    .action(async (app: string, flags: Flags) => {
      const { versionStatus } = await import('../../lifecycle/index.js');
      const status = await versionStatus(await connectFor(flags), app);
      printData(io, flags.output, 'VersionStatus', { ...status }, () => statusTable(status));
    });

  clusterCommand(version, 'target', 'record RELEASE as the release to run; the next apply carries it out')
    .argument('<APP>', 'app name')
    .argument('<RELEASE>', "a release of the app's catalog (flotilla version status APP lists them)")
    .option('--force', 'allow a downgrade (development clusters only: OpenStack does not support downgrades)')
    .option('--ack-custom-images', 'keep the custom images set, unchanged, across this target change')
    .action(async (app: string, release: string, flags: Flags & { force?: boolean; ackCustomImages?: boolean }) => {
      const { setVersionTarget } = await import('../../lifecycle/index.js');
      const { versions, warnings } = await setVersionTarget(await connectFor(flags), app, release, {
        ...(flags.force ? { force: true } : {}),
        ...(flags.ackCustomImages ? { ackCustomImages: true } : {}),
      });
      for (const warning of warnings) io.err(`warning: ${warning}`);
      printData(
        io,
        flags.output,
        'VersionTarget',
        { app, target: versions.target, deployed: versions.deployed ?? null, warnings },
        () => `${app}: target ${versions.target}${versions.deployed ? ` (deployed: ${versions.deployed})` : ''}; run flotilla apply ${app} to carry it out`,
      );
    });

  const image = version
    .command('image')
    .description("custom images kept in the cluster, on top of the target release's (FIELD, or FIELD.<backend> of a per-backend map)");
  clusterCommand(image, 'set', 'set a custom image; it takes effect at the next apply (flotilla diff shows it)')
    .argument('<APP>', 'app name')
    .argument(
      '<FIELD>',
      'image field (overrides/versions/images.yaml), or FIELD.<backend> (cinder_volume.ceph; FIELD.default is every backend without its own)',
    )
    .argument('<REF>', 'image reference, pinned: NAME:TAG@sha256:DIGEST, or NAME:TAG with --resolve')
    .option('--resolve', 'pin the reference to the digest its tag points to, through the registry')
    .option('--registry-config <FILE>', 'Docker-style credentials for the registry (default ~/.docker/config.json)')
    .option('--insecure-registry <HOST>', 'a registry reached over plain HTTP (repeatable; loopback ones always are)', collect)
    .action(
      async (app: string, field: string, reference: string, flags: Flags & { resolve?: boolean; registryConfig?: string; insecureRegistry?: string[] }) => {
        const { setCustomImage } = await import('../../lifecycle/index.js');
        const registry = {
          ...(flags.registryConfig ? { registryConfig: flags.registryConfig } : {}),
          ...(flags.insecureRegistry ? { insecureRegistries: flags.insecureRegistry } : {}),
        };
        const set = await setCustomImage(await connectFor(flags), app, field, reference, { ...(flags.resolve ? { resolve: true } : {}), registry });
        printData(
          io,
          flags.output,
          'CustomImageSet',
          { app, field, reference: set.reference },
          () => `${app}: custom image ${field} = ${set.reference}; run flotilla apply ${app} to use it`,
        );
      },
    );
  clusterCommand(image, 'unset', "remove a custom image: the target release's image applies again at the next apply")
    .argument('<APP>', 'app name')
    .argument('<FIELD>', 'the field as it was set')
    .action(async (app: string, field: string, flags: Flags) => {
      const { unsetCustomImage } = await import('../../lifecycle/index.js');
      await unsetCustomImage(await connectFor(flags), app, field);
      printData(
        io,
        flags.output,
        'CustomImageUnset',
        { app, field },
        () => `${app}: custom image ${field} removed; run flotilla apply ${app} to use the release's image`,
      );
    });
  clusterCommand(image, 'list', 'the custom images set, with when and by whom')
    .argument('<APP>', 'app name')
    .action(async (app: string, flags: Flags) => {
      const { listCustomImages } = await import('../../lifecycle/index.js');
      const images = await listCustomImages(await connectFor(flags), app);
      printData(io, flags.output, 'CustomImageList', { app, images }, () => customImagesTable(images));
    });
}
