/**
 * What an operation tells whoever runs it, as it goes: steps, progress,
 * releases becoming ready, warnings, plugin log lines (already redacted),
 * notes for --debug.
 * The CLI turns these into a progress bar on a terminal, lines otherwise.
 */
import type { PluginLogEntry } from '../plugins/index.js';
import type { Progress } from './record.js';

export type LifecycleEvent =
  | { readonly type: 'step'; readonly message: string }
  | { readonly type: 'progress'; readonly progress: Progress; readonly elapsedMs: number }
  | { readonly type: 'release-ready'; readonly release: string; readonly elapsedMs: number }
  | { readonly type: 'warning'; readonly message: string }
  /** Said only under --debug: why something kept from an earlier run (a cache entry) was not used. */
  | { readonly type: 'debug'; readonly message: string }
  | { readonly type: 'plugin-log'; readonly entry: PluginLogEntry };

export type EventSink = (event: LifecycleEvent) => void;
