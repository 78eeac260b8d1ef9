/**
 * Names and durations in the forms Kubernetes, Helm and Flux accept, defined
 * once: as patterns for the JSON schemas of src/app and src/build, and as
 * checks for code that reads them elsewhere (import, plugins).
 */

/** A DNS-1123 label (Kubernetes object and namespace names, chart names): lower-case letters, digits and inner dashes. */
export const DNS1123_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const DNS1123_LABEL = new RegExp(DNS1123_LABEL_PATTERN);

/** Helm refuses release names longer than this. */
export const HELM_RELEASE_NAME_MAX = 53;

/** A Go duration as Flux reads `interval` and `timeout`: 30m, 1h, 1m30s, 500ms. */
export const FLUX_DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';
const FLUX_DURATION = new RegExp(FLUX_DURATION_PATTERN);

/** What Flux takes when a HelmRelease leaves `timeout` / `interval` out; flotilla writes them explicitly. */
export const FLUX_DEFAULT_TIMEOUT = '5m';
export const FLUX_DEFAULT_INTERVAL = '1m';

export function isDns1123Label(name: string): boolean {
  return DNS1123_LABEL.test(name);
}

/** A Helm release name: a DNS-1123 label of at most 53 characters. */
export function isHelmReleaseName(name: string): boolean {
  return isDns1123Label(name) && name.length <= HELM_RELEASE_NAME_MAX;
}

export function isFluxDuration(text: string): boolean {
  return FLUX_DURATION.test(text);
}
