import { describe, expect, it } from 'vitest';
import { checkLayerSize, chooseLayer, MediaType, parseManifest, type ArtifactManifest } from './artifact.ts';

const d = (c: string) => `sha256:${c.repeat(64)}`;
const layer = (mediaType: string, c = 'b', size = 100) => ({ mediaType, digest: d(c), size });
const manifest = (layers: object[], extra: object = {}) =>
  JSON.stringify({
    schemaVersion: 2,
    mediaType: MediaType.ociManifest,
    config: { mediaType: MediaType.fluxConfig, digest: d('a'), size: 2 },
    layers,
    ...extra,
  });
const A = 'oci://r/x';

describe('parseManifest', () => {
  it('reads a Flux artifact with its annotations', () => {
    const r = parseManifest(
      manifest([layer(MediaType.fluxContent)], { annotations: { 'org.opencontainers.image.revision': 'main@sha1:1' } }),
      undefined,
      A,
    );
    expect(r.ok && r.value.annotations).toEqual({ 'org.opencontainers.image.revision': 'main@sha1:1' });
  });
  it('takes the media type from Content-Type when the body has none (Docker v2)', () => {
    const body = JSON.stringify({ schemaVersion: 2, config: layer('x', 'a'), layers: [layer(MediaType.dockerLayer)] });
    expect(parseManifest(body, `${MediaType.dockerManifest}; charset=utf-8`, A).ok).toBe(true);
  });
  it.each([
    ['not JSON', '{', undefined, 'not JSON'],
    [
      'an index',
      JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociIndex, manifests: [] }),
      undefined,
      'image index',
    ],
    [
      'another media type',
      manifest([], { mediaType: 'application/vnd.example+json' }),
      undefined,
      'manifest media type',
    ],
    ['a layer without digest', manifest([{ mediaType: MediaType.ociLayer, size: 1 }]), undefined, 'lack a media type'],
    [
      'a sha512 layer',
      manifest([{ mediaType: MediaType.ociLayer, digest: `sha512:${'a'.repeat(128)}`, size: 1 }]),
      undefined,
      'sha256',
    ],
  ])('refuses %s (ArtifactMediaTypeUnsupported)', (_what, body, contentType, why) => {
    const r = parseManifest(body, contentType, A);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failure.reason).toBe('ArtifactMediaTypeUnsupported');
      expect(r.failure.message).toContain(A);
      expect(r.failure.message).toContain(why);
    }
  });
});

describe('chooseLayer', () => {
  const m = (layers: ArtifactManifest['layers']): ArtifactManifest => ({
    mediaType: MediaType.ociManifest,
    config: layer(MediaType.fluxConfig, 'a'),
    layers,
    annotations: {},
  });
  it.each([
    [
      'the first layer by default',
      [layer(MediaType.fluxContent, 'b'), layer(MediaType.ociLayer, 'c')],
      undefined,
      d('b'),
    ],
    ['a plain single-layer tarball', [layer(MediaType.ociLayer, 'c')], undefined, d('c')],
    [
      'the first of the selected media type',
      [layer('application/x-other', 'b'), layer(MediaType.ociLayer, 'c')],
      { mediaType: MediaType.ociLayer },
      d('c'),
    ],
    ['with operation extract', [layer(MediaType.fluxContent, 'b')], { operation: 'extract' }, d('b')],
  ])('picks %s', (_what, layers, selector, digest) => {
    const r = chooseLayer(m(layers), selector, A);
    expect(r.ok && r.value.digest).toBe(digest);
  });
  it.each([
    ['no layers', [], undefined, 'ArtifactMediaTypeUnsupported', 'no layers'],
    [
      'a layer that is not a gzip tarball',
      [layer('text/plain')],
      undefined,
      'ArtifactMediaTypeUnsupported',
      'not a gzip tarball',
    ],
    [
      'zstd',
      [layer('application/vnd.oci.image.layer.v1.tar+zstd')],
      undefined,
      'ArtifactMediaTypeUnsupported',
      'not a gzip tarball',
    ],
    [
      'a selector matching nothing',
      [layer(MediaType.ociLayer)],
      { mediaType: MediaType.fluxContent },
      'ArtifactMediaTypeUnsupported',
      'no layer of media type',
    ],
    ['operation copy', [layer(MediaType.ociLayer)], { operation: 'copy' }, 'InvalidSpec', 'only extract'],
  ])('refuses %s', (_what, layers, selector, reason, why) => {
    const r = chooseLayer(m(layers), selector, A);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failure.reason).toBe(reason);
      expect(r.failure.message).toContain(why);
    }
  });
});

describe('checkLayerSize', () => {
  it('passes up to the limit and refuses past it, naming the flag', () => {
    expect(checkLayerSize(layer(MediaType.ociLayer, 'b', 100), 100, A).ok).toBe(true);
    const r = checkLayerSize(layer(MediaType.ociLayer, 'b', 101), 100, A);
    expect(!r.ok && r.failure).toMatchObject({ reason: 'ArtifactTooLarge', terminal: true });
    expect(!r.ok && r.failure.message).toContain('--oci-max-layer-bytes');
  });
});
