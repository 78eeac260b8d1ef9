/** Opening the app the way every command does: one session, the app's warnings printed on stderr. */
import type { PluginHostOptions } from '../../plugins/index.js';
import { Session } from '../../session/index.js';
import { printWarnings } from '../output.js';

export async function openSessionForCommand(appDir: string | undefined, deployment?: string, plugins?: Partial<PluginHostOptions>): Promise<Session> {
  const session = await Session.fromDirectory(appDir ?? '.', { deployment, ...(plugins ? { plugins } : {}) });
  printWarnings(session.app.warnings);
  return session;
}
