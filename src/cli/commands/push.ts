import type { Command } from 'commander';
import { FlotillaError } from '../../diagnostics/index.js';
import { dumpYaml } from '../../document/index.js';
import { OciClient, pushBundle } from '../../oci/index.js';

interface PushCommandOptions {
  registryConfig?: string;
  insecureRegistry: string[];
  force?: boolean;
  output: string;
}

export function register(program: Command): void {
  program
    .command('push')
    .description('store an application tarball in an OCI registry (its own artifact type, the signature alongside); upload oci://… pulls it back')
    .argument('<BUNDLE>', 'application tarball (.tgz)')
    .argument('<TARGET>', 'oci://HOST[:PORT]/REPO/APP[:TAG] (the tag defaults to the app version)')
    .option('--registry-config <FILE>', 'Docker-style config with credentials (default: $DOCKER_CONFIG/config.json or ~/.docker/config.json)')
    .option('--insecure-registry <HOST>', 'speak plain HTTP to this registry (repeatable; loopback registries always are)', (v: string, all: string[]) => [...all, v], [])
    .option('--force', 'move the tag when it already holds another bundle')
    .option('-o, --output <FORMAT>', 'table, json or yaml', 'table')
    .action(async (bundle: string, target: string, opts: PushCommandOptions) => {
      if (!target.startsWith('oci://')) throw new FlotillaError(`push: TARGET must be oci://HOST/REPO/APP[:TAG], not ${JSON.stringify(target)}`, { exitCode: 2 });
      if (!['table', 'json', 'yaml'].includes(opts.output)) throw new FlotillaError(`push: --output must be table, json or yaml, not ${JSON.stringify(opts.output)}`, { exitCode: 2 });
      const client = new OciClient({ registryConfig: opts.registryConfig, insecureRegistries: opts.insecureRegistry });
      const pushed = await pushBundle(client, bundle, target, { force: opts.force });
      if (opts.output !== 'table') {
        process.stdout.write(opts.output === 'json' ? `${JSON.stringify(pushed, null, 2)}\n` : dumpYaml(pushed));
        return;
      }
      const what = pushed.status === 'unchanged' ? 'already there' : 'pushed';
      console.log(`${what}: ${pushed.app} ${pushed.version} (${(pushed.size / 1048576).toFixed(1)} MiB, ${pushed.signed ? 'signed' : 'unsigned'})\n  ${pushed.reference}`);
    });
}
