import type { Command } from 'commander';
import { OciClient, pushBundle } from '../../oci/index.js';
import type { CommandContext } from '../context.js';
import { printData } from '../output.js';
import { collect, outputOption, UsageError } from '../options.js';

interface PushCommandOptions {
  registryConfig?: string;
  insecureRegistry: string[];
  force?: boolean;
  output: string;
}

export function register(program: Command, { io }: CommandContext): void {
  program
    .command('push')
    .description('store an application tarball in an OCI registry (its own artifact type, the signature alongside); upload oci://… pulls it back')
    .argument('<BUNDLE>', 'application tarball (.tgz)')
    .argument('<TARGET>', 'oci://HOST[:PORT]/REPO/APP[:TAG] (the tag defaults to the app version)')
    .option('--registry-config <FILE>', 'Docker-style config with credentials (default: $DOCKER_CONFIG/config.json or ~/.docker/config.json)')
    .option('--insecure-registry <HOST>', 'speak plain HTTP to this registry (repeatable; loopback registries always are)', collect, [])
    .option('--force', 'move the tag when it already holds another bundle')
    .addOption(outputOption())
    .action(async (bundle: string, target: string, opts: PushCommandOptions) => {
      if (!target.startsWith('oci://')) throw new UsageError(`push: TARGET must be oci://HOST/REPO/APP[:TAG], not ${JSON.stringify(target)}`);
      const client = new OciClient({ registryConfig: opts.registryConfig, insecureRegistries: opts.insecureRegistry });
      const pushed = await pushBundle(client, bundle, target, { force: opts.force });
      const what = pushed.status === 'unchanged' ? 'already there' : 'pushed';
      printData(
        io,
        opts.output,
        'Push',
        { ...pushed },
        () =>
          `${what}: ${pushed.app} ${pushed.version} (${(pushed.size / 1048576).toFixed(1)} MiB, ${pushed.signed ? 'signed' : 'unsigned'})\n  ${pushed.reference}`,
      );
    });
}
