/**
 * Chart dependencies on repositories (oci://, http(s)://) resolved as
 * `helm dependency build` does: Chart.lock's pinned versions or the highest
 * within range, fetched once and cached by digest in the user cache, or
 * served by the app's own chart folders a repository is mapped to.
 */
export { type RepositoryResolverOptions } from './resolver.js';
export { appRepositoryResolver } from './app.js';
