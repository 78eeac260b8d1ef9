/**
 * OCI registries: references, the distribution API client (resolve, pull,
 * push, tags; anonymous, Basic and Bearer-token authentication with
 * Docker-style credentials), and the media types flotilla reads and writes.
 */
export { OciReference, parseReference, isLoopback } from './reference.js';
export {
  RegistryError,
  InvalidReference,
  RegistryUnreachable,
  ManifestUnknown,
  BlobUnknown,
  Unauthorized,
  DigestMismatch,
  ContentTooLarge,
  RegistryProtocolError,
} from './errors.js';
export { MediaType, type Descriptor, type ImageManifest, type ImageIndex } from './media-types.js';
export { credentialsFromConfig, RegistryConfigError, type CredentialStore, type RegistryCredential } from './credentials.js';
export { parseChallenges, type AuthChallenge } from './challenge.js';
export { OciClient, digestOf, type OciClientOptions, type FetchedManifest, type BlobReadOptions, type PushFileOptions } from './client.js';
export { chartVersionTag, pushCharts, type ChartArchiveInput, type PushChartOptions, type PushedChart } from './charts.js';
export {
  NotABundle,
  pullBundle,
  pushBundle,
  type BundleConfig,
  type PulledBundle,
  type PullBundleOptions,
  type PushBundleOptions,
  type PushedBundle,
} from './bundles.js';
