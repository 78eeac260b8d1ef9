/** Flux: the HelmRelease type, HelmRelease, HelmRepository and kustomization generation in StarlingX's fluxcd-manifests layout, and flotilla's schema of those objects. */
export * from './helmrelease.js';
export * from './manifests.js';
export * from './overrides.js';
export * from './schema.js';
