/**
 * Discovery checks before an operation: the cluster must serve the Flux
 * kinds flotilla writes, else the apply would fail object by object with
 * messages about unknown kinds.
 */
import { FlotillaError } from '../diagnostics/index.js';
import type { KubeClient } from './client.js';
import { NotFound } from './errors.js';
import { discoverKind } from './objects.js';

/** The kinds flotilla applies that only exist where Flux is installed: `plural.group`, apiVersion, kind. */
const FLUX_KINDS = [
  { resource: 'helmreleases.helm.toolkit.fluxcd.io', apiVersion: 'helm.toolkit.fluxcd.io/v2', kind: 'HelmRelease' },
  { resource: 'helmrepositories.source.toolkit.fluxcd.io', apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'HelmRepository' },
] as const;

export class FluxMissingError extends FlotillaError {}

/** Throws FluxMissingError naming the first Flux kind the cluster does not serve. */
export async function requireFlux(client: Pick<KubeClient, 'core' | 'custom' | 'context'>): Promise<void> {
  for (const want of FLUX_KINDS) {
    let served: boolean;
    try {
      served = (await discoverKind(client, want.apiVersion, want.kind)) !== undefined;
    } catch (error) {
      if (!(error instanceof NotFound)) throw error;
      served = false;
    }
    if (!served) {
      throw new FluxMissingError(
        `this cluster has no Flux: ${want.resource} (${want.apiVersion}) is not served by context ${client.context}; install Flux (helm-controller and source-controller) first`,
      );
    }
  }
}
