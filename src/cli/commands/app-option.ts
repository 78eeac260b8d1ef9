/** Loading the app the way every command does: print its warnings on stderr. */
import { loadApp, type App } from '../../app/index.js';
import { printWarnings } from '../output.js';

export async function loadAppForCommand(appDir: string | undefined, deployment?: string): Promise<App> {
  const app = await loadApp(appDir ?? '.', { deployment });
  printWarnings(app.warnings);
  return app;
}
