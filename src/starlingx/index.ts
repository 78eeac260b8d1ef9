/** The StarlingX platform path: what an operator deploys with `system application-*` (docs/starlingx.md). */
export {
  exportForPlatform,
  exportSystemOverrides,
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
export { type PlatformImageValue } from './images.js';
