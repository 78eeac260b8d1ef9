/**
 * How the host recognises plugin classes. The plugin bundle carries its own
 * copy of the base classes, so `instanceof` against the host's copy cannot
 * work: every plugin instance says what it is with these two fields instead.
 */

/** Bumped when the contract between host and bundled plugins changes. */
export const PLUGIN_API_VERSION = 1;

export type PluginKind = 'chart' | 'lifecycle' | 'kustomize';
