/**
 * Build server: a background flotilla process that runs `flotilla build`
 * for one-shot CLI calls, so a rebuild keeps what the previous one knew (the
 * warm code, the parsed files, the watched folders) instead of starting
 * over in a new process (docs/architecture.md, "Build server").
 */
export { askServer, listServers, runOnServer, serverStatus, stopServers, type CommandOutput } from './client.js';
export { type PrepareFrom } from './start.js';
export { installationOf, serverPlace, SERVERS_FOLDER, serversFolder, type Installation, type ServerPlace } from './place.js';
export type { Reply, Request, RunRequest, ServerStatus } from './protocol.js';
export { serve, type ServeOptions } from './server.js';
