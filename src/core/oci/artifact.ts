import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';
import { isDigest } from './reference.ts';

/**
 * The artifact formats read: Flux's (`flux push artifact`: config `application/vnd.cncf.flux.config.v1+json`,
 * one layer `application/vnd.cncf.flux.content.v1.tar+gzip`) and a plain single-layer tarball
 * (`application/vnd.oci.image.layer.v1.tar+gzip`, or Docker's `…rootfs.diff.tar.gzip`). Which layer is
 * unpacked follows Flux's OCIRepository: spec.source.oci.layerSelector.mediaType picks the first layer of
 * that type; without it, the first layer, which must be a gzip tarball.
 */
export const MediaType = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  fluxConfig: 'application/vnd.cncf.flux.config.v1+json',
  fluxContent: 'application/vnd.cncf.flux.content.v1.tar+gzip',
  ociLayer: 'application/vnd.oci.image.layer.v1.tar+gzip',
  dockerLayer: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
} as const;

/** Layer media types that are gzip-compressed tarballs: the only ones unpacked. */
export const TARBALL_MEDIA_TYPES: readonly string[] = [
  MediaType.fluxContent,
  MediaType.ociLayer,
  MediaType.dockerLayer,
];

/** The manifest media types asked for (Accept) and accepted. */
export const MANIFEST_MEDIA_TYPES: readonly string[] = [MediaType.ociManifest, MediaType.dockerManifest];

/** Flux's annotations on the manifest (`flux push artifact --source --revision`). */
export const Annotation = {
  created: 'org.opencontainers.image.created',
  source: 'org.opencontainers.image.source',
  revision: 'org.opencontainers.image.revision',
} as const;

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

export interface ArtifactManifest {
  mediaType: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations: Record<string, string>;
}

export interface LayerSelector {
  mediaType?: string | undefined;
  operation?: string | undefined;
}

const refused = (artifact: string, why: string) =>
  fail<never>(Reason.ArtifactMediaTypeUnsupported, `artifact ${artifact} ${why}`, { terminal: true });

function descriptor(raw: unknown): Descriptor | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const d = raw as Record<string, unknown>;
  if (typeof d.mediaType !== 'string' || typeof d.digest !== 'string' || typeof d.size !== 'number') return undefined;
  if (!isDigest(d.digest) || !Number.isSafeInteger(d.size) || d.size < 0) return undefined;
  return { mediaType: d.mediaType, digest: d.digest, size: d.size };
}

/**
 * The manifest body, checked: an image manifest (OCI or Docker v2), not an index; every descriptor with a
 * sha256 digest and a size. `contentType` is the response's Content-Type (the body's mediaType wins).
 */
export function parseManifest(
  body: string,
  contentType: string | undefined,
  artifact: string,
): Result<ArtifactManifest> {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    return refused(artifact, 'has a manifest that is not JSON');
  }
  if (typeof raw !== 'object' || raw === null) return refused(artifact, 'has a manifest that is not a JSON object');
  const m = raw as Record<string, unknown>;
  const mediaType = typeof m.mediaType === 'string' ? m.mediaType : (contentType?.split(';')[0]?.trim() ?? '');
  if (mediaType === MediaType.ociIndex || mediaType === MediaType.dockerList || Array.isArray(m.manifests)) {
    return refused(
      artifact,
      `is an image index (${mediaType || 'manifests list'}), not a single artifact: point ref at one manifest's digest or push a single-manifest artifact`,
    );
  }
  if (!MANIFEST_MEDIA_TYPES.includes(mediaType)) {
    return refused(
      artifact,
      `has manifest media type ${JSON.stringify(mediaType.slice(0, 100))}; expected ${MANIFEST_MEDIA_TYPES.join(' or ')}`,
    );
  }
  const config = descriptor(m.config);
  const layers = Array.isArray(m.layers) ? m.layers.map(descriptor) : [];
  if (!config || layers.some((l) => l === undefined)) {
    return refused(artifact, 'has a manifest whose config or layers lack a media type, a sha256 digest or a size');
  }
  const annotations: Record<string, string> = {};
  if (typeof m.annotations === 'object' && m.annotations !== null) {
    for (const [k, v] of Object.entries(m.annotations as Record<string, unknown>)) {
      if (typeof v === 'string') annotations[k] = v;
    }
  }
  return ok({ mediaType, config, layers: layers as Descriptor[], annotations });
}

/** The layer to unpack, as Flux's OCIRepository selects it; refused when it is not a gzip tarball. */
export function chooseLayer(
  manifest: ArtifactManifest,
  selector: LayerSelector | undefined,
  artifact: string,
): Result<Descriptor> {
  if (selector?.operation !== undefined && selector.operation !== 'extract') {
    return fail(
      Reason.InvalidSpec,
      `spec.source.oci.layerSelector.operation ${JSON.stringify(selector.operation.slice(0, 40))} is not supported: only extract (the default)`,
      { terminal: true },
    );
  }
  if (manifest.layers.length === 0)
    return refused(artifact, 'has no layers: push a directory with packagesync push artifact');
  const wanted = selector?.mediaType;
  const layer = wanted === undefined ? manifest.layers[0]! : manifest.layers.find((l) => l.mediaType === wanted);
  if (!layer) {
    const found = [...new Set(manifest.layers.map((l) => l.mediaType))].join(', ');
    return refused(
      artifact,
      `has no layer of media type ${wanted} (it has ${found.slice(0, 300)}): fix spec.source.oci.layerSelector.mediaType`,
    );
  }
  if (!TARBALL_MEDIA_TYPES.includes(layer.mediaType)) {
    return refused(
      artifact,
      `has layer media type ${JSON.stringify(layer.mediaType.slice(0, 100))}, which is not a gzip tarball; expected one of ${TARBALL_MEDIA_TYPES.join(', ')} (push with packagesync push artifact or flux push artifact)`,
    );
  }
  return ok(layer);
}

/** Bounds a layer's declared size by the limit before any byte of it is downloaded. */
export function checkLayerSize(layer: Descriptor, maxBytes: number, artifact: string): Result<void> {
  if (layer.size <= maxBytes) return ok(undefined);
  return fail(
    Reason.ArtifactTooLarge,
    `artifact ${artifact} has a layer of ${layer.size} bytes, over the limit of ${maxBytes} (--oci-max-layer-bytes): make the package smaller or raise the flag`,
    { terminal: true },
  );
}
