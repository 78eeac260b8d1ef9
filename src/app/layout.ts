/** The app source tree's layout (docs/app-format.md): where each file of an app lives, relative to its root. */
export const APP_FILES = {
  metadata: 'fluxcd/metadata.yaml',
  releases: 'fluxcd/releases.yaml',
  deployment: 'overrides/deployment.yaml',
  featuresSchema: 'overrides/features.schema.json',
  presets: 'overrides/presets',
  sizes: 'overrides/sizes',
  versions: 'overrides/versions',
  imageTargets: 'overrides/versions/images.yaml',
  serviceDefaults: 'overrides/service-defaults.yaml',
  static: 'overrides/static',
  templates: 'overrides/templates',
  policies: 'policies',
  /** Files shipped as they are into fluxcd-manifests/ (same relative path): extra resources and patch files a kustomization names. */
  manifests: 'fluxcd/manifests',
} as const;
