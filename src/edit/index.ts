/**
 * Comment-keeping edits of an app source tree: static overrides and other
 * files (`overrides set|unset`), image references (`images list|bump|pin`)
 * and versions (`bump`). Each command computes every file change first,
 * shows it as a unified diff, and writes atomically unless it is a dry run.
 */
export { unifiedDiff, writeChanges, ConcurrentChangeError, type FileChange } from './changes.js';
export { editOverrides, UnknownPathError, type OverrideEdit } from './overrides.js';
export { parseAssignment, parseValuePath, PathSyntaxError, type Assignment, type PathSegment, type ValuePath } from './path.js';
export { EditRefusedError, YamlFileEditor, type EditRecord } from './yaml-edit.js';
export {
  bumpVersions,
  nextAppVersion,
  nextChartVersion,
  VersionBumpError,
  type ChartBump,
  type VersionBumpRequest,
  type VersionBumpResult,
  type VersionChange,
} from './versions.js';
export {
  bumpField,
  bumpToRelease,
  listImages,
  ImageBumpError,
  type ImageBumpResult,
  type ImageChange,
  type ImageField,
  type ImageInventory,
  type ImageLanding,
  type ImagePlace,
} from './images.js';
export {
  checkPins,
  ImageLookupError,
  pinImages,
  type ImageUse,
  type PinCheck,
  type PinnedImage,
  type PinOptions,
  type PinResult,
  type PinStatus,
} from './pin.js';
