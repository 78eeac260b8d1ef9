/** Media types of the OCI image spec, Docker's registry v2 schema 2, Helm charts and flotilla bundles. */
export const MediaType = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  dockerManifestList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  ociEmpty: 'application/vnd.oci.empty.v1+json',
  helmConfig: 'application/vnd.cncf.helm.config.v1+json',
  helmChart: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip',
  helmProvenance: 'application/vnd.cncf.helm.chart.provenance.v1.prov',
  flotillaAppConfig: 'application/vnd.flotilla.app.config.v1+json',
  flotillaAppBundle: 'application/vnd.flotilla.app.bundle.v1.tar+gzip',
  flotillaAppSignature: 'application/vnd.flotilla.app.signature.v1',
} as const;

/** Every manifest kind the client understands, in the order of preference sent as `Accept`. */
export const MANIFEST_MEDIA_TYPES: readonly string[] = [MediaType.ociIndex, MediaType.ociManifest, MediaType.dockerManifestList, MediaType.dockerManifest];

/** A content descriptor (OCI image spec, descriptor.md). */
export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly artifactType?: string;
  readonly platform?: Readonly<Record<string, unknown>>;
}

/** An image manifest (OCI or Docker schema 2): one config and its layers. */
export interface ImageManifest {
  readonly schemaVersion: 2;
  readonly mediaType?: string;
  readonly artifactType?: string;
  readonly config: Descriptor;
  readonly layers: readonly Descriptor[];
  readonly subject?: Descriptor;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** An image index (OCI) or manifest list (Docker): manifests per platform. */
export interface ImageIndex {
  readonly schemaVersion: 2;
  readonly mediaType?: string;
  readonly manifests: readonly Descriptor[];
  readonly annotations?: Readonly<Record<string, string>>;
}

export function isIndexMediaType(mediaType: string): boolean {
  return mediaType === MediaType.ociIndex || mediaType === MediaType.dockerManifestList;
}
