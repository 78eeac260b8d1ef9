/** Opening the app the way every command does: one session, the app's warnings printed on stderr. */
import { Session } from '../../session/index.js';
import { printWarnings } from '../output.js';

export async function openSessionForCommand(appDir: string | undefined, deployment?: string): Promise<Session> {
  const session = await Session.fromDirectory(appDir ?? '.', { deployment });
  printWarnings(session.app.warnings);
  return session;
}
