/** Flux: HelmRelease, HelmRepository and kustomization generation in StarlingX's fluxcd-manifests layout. */
export * from './manifests.js';
export * from './overrides.js';
