/** The StarlingX platform path: a bundle's system overrides exported for `system helm-override-update` (docs/starlingx.md). */
export { exportSystemOverrides, OVERRIDES_SCRIPT, OverridesExportError, type ExportedOverrides, type OverridesExport, type OverridesExportOptions } from './export.js';
