/** The app source model: load and validate an app source tree and its deployment spec. */
export * from './layout.js';
export * from './load.js';
export { directoryAppSource, type AppSource, type ChartFile } from './source.js';
export * from './metadata.js';
export * from './releases.js';
export * from './spec.js';
export { assignPhases, type UpdatePhase } from './update-phases.js';
export { checkSchema, createSchemaAjv, schemaHash, type JsonSchema } from './schema-check.js';
export { nearest } from '../names/index.js';
