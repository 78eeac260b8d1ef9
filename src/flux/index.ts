/** Flux: the HelmRelease type, and HelmRelease, HelmRepository and kustomization generation in StarlingX's fluxcd-manifests layout. */
export * from './helmrelease.js';
export * from './manifests.js';
export * from './overrides.js';
