/** Typed errors of the lifecycle: each names the app and what stopped the operation. */
import { FlotillaError } from '../diagnostics/index.js';

export class LifecycleError extends FlotillaError {}
