/** The StarlingX platform path: what an operator deploys with `system application-*` (docs/starlingx.md). */
export {
  APPLY_SCRIPT,
  exportForPlatform,
  exportSystemOverrides,
  OVERRIDES_SCRIPT,
  OverridesExportError,
  platformPasswordStore,
  type ExportedOverrides,
  type MovedImage,
  type OverridesExport,
  type OverridesExportOptions,
  type PlatformExport,
  type PlatformExportOptions,
  type PlatformRelease,
} from './export.js';
export { PLATFORM_REGISTRY, platformImageValues, type PlatformImageValue } from './images.js';
