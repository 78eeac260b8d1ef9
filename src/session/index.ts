/**
 * The session: an app with its plugin host, values providers and redactor,
 * wired once for every command (src/cli) and the lifecycle.
 */
export { Session, type SessionOptions } from './session.js';
