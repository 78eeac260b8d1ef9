/** The resolver a command loading an app's charts uses: the app's `chartRepositories` mapping, then the cache and the repositories. */
import type { App } from '../app/index.js';
import type { RepositoryResolver } from '../charts/index.js';
import { repositoryResolver } from './resolver.js';

export interface AppResolverOptions {
  /** Fetch nothing (`--offline`). */
  readonly offline?: boolean;
  /** The dependency cache; default `<user cache>/chart-dependencies`. */
  readonly cacheDir?: string;
}

export function appRepositoryResolver(app: Pick<App, 'chartRepositories' | 'path'>, options: AppResolverOptions = {}): RepositoryResolver {
  const mapping = new Map([...app.chartRepositories].map(([url, folder]) => [url, app.path(folder)]));
  return repositoryResolver({ mapping, offline: options.offline, cacheDir: options.cacheDir });
}
