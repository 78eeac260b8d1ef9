/** Flux: HelmRelease, HelmRepository and kustomization generation in StarlingX's fluxcd-manifests layout, and flotilla's schema of those objects. */
export * from './manifests.js';
export * from './schema.js';
