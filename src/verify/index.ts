/** Verify and inspect built application tarballs. */
export { verifyBundle, type VerifyOptions, type VerifyReport } from './verify.js';
export { inspectBundle, type InspectedChart, type InspectReport } from './inspect.js';
export { type ImageReference } from './images.js';
