import { rm } from 'node:fs/promises';
import type { Logger } from 'pino';
import { durationMs, type Spec } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import type { ControllerConfig } from '../../config/controller-config.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import { checkLayerSize, chooseLayer, parseManifest } from '../../core/oci/artifact.ts';
import { registryAuthFromSecret } from '../../core/oci/credentials.ts';
import { chooseSemverTag, formatOciRevision, validateOciRef } from '../../core/oci/ref.ts';
import { parseOciRepository } from '../../core/oci/reference.ts';
import { readPackageFiles } from '../git/read-package.ts';
import type { FetchedSource, SourcePort } from '../git/source-port.ts';
import { validatePackagePath } from '../git/validate.ts';
import { builtPackageAt } from '../render/build.ts';
import { createCheckoutStore, type CheckoutStore } from './checkout-store.ts';
import { unpackLayer } from './extract.ts';
import { RegistryClient } from './registry-client.ts';

/**
 * The engine's SourcePort for spec.source.oci: resolve the ref to a manifest digest (the revision, shown as
 * Flux shows it: `tag@sha256:…`), and hand out a read-only directory of the artifact's layer, unpacked once
 * per digest into the git cache root (`<root>/<key>/checkouts/<digest hex>`, the same layout, so the git
 * cache's bounds and eviction count it too). Every download is verified against its digest before it is
 * unpacked; every tar entry is checked before anything is written.
 */
export type OciSourceConfig = Pick<
  ControllerConfig,
  'gitCacheDir' | 'gitTimeout' | 'maxFiles' | 'maxFileBytes' | 'maxTotalBytes' | 'ociMaxLayerBytes'
> &
  Partial<Pick<ControllerConfig, 'gitCacheMaxBytes' | 'gitCacheMaxAge'>>;

export function createOciSource(
  config: OciSourceConfig,
  log: Logger,
  store: CheckoutStore = createCheckoutStore(config),
): SourcePort {
  const limits = { maxFiles: config.maxFiles, maxFileBytes: config.maxFileBytes, maxTotalBytes: config.maxTotalBytes };

  /** The checks every use of spec.source.oci starts with, and a registry client for it (closed by the caller). */
  function open(source: Spec['source'], credentials: Record<string, string> | undefined, signal: AbortSignal) {
    const oci = source.oci;
    if (!oci) return fail(Reason.InvalidSpec, 'spec.source.oci is not set', { terminal: true });
    const repo = parseOciRepository(oci.url);
    if (!repo.ok) return repo;
    const artifact = repo.value.url;
    if (oci.insecure && !repo.value.loopback) {
      return fail(
        Reason.InvalidURL,
        `spec.source.oci.insecure is allowed only for a loopback registry, not ${repo.value.host}: remove it and serve the registry over https`,
        { terminal: true },
      );
    }
    const ref = validateOciRef(oci.ref);
    if (!ref.ok) return ref;
    const secretName = oci.secretRef?.name ?? oci.certSecretRef?.name ?? '';
    const auth = registryAuthFromSecret(credentials, repo.value.host, secretName);
    if (!auth.ok) return auth;
    const timeout = AbortSignal.any([signal, AbortSignal.timeout(durationMs(config.gitTimeout))]);
    const client = new RegistryClient(repo.value, {
      auth: auth.value,
      insecure: oci.insecure === true,
      signal: timeout,
    });
    return ok({ oci, artifact, ref: ref.value, auth: auth.value, client });
  }

  /** The ref (tag, semver range or digest) → the manifest it names now, its digest checked. */
  async function resolveManifest(
    client: RegistryClient,
    r: Extract<ReturnType<typeof validateOciRef>, { ok: true }>['value'],
    artifact: string,
  ) {
    let tag: string | undefined;
    if (r.kind === 'semver') {
      const tags = await client.tags();
      if (!tags.ok) return tags;
      tag = chooseSemverTag(tags.value, r.range);
      if (tag === undefined)
        return fail(
          Reason.RefNotFound,
          `no tag of ${artifact} matches the semver range ${r.range}: push one, or fix spec.source.oci.ref.semver`,
        );
    } else if (r.kind === 'tag') tag = r.tag;
    const manifest = await client.manifest(tag ?? (r as { digest: string }).digest);
    if (!manifest.ok) return manifest;
    const digest = manifest.value.digest;
    if (r.kind === 'digest' && digest !== r.digest) {
      return fail(
        Reason.ArtifactDigestMismatch,
        `artifact ${artifact}: the manifest the registry sent for ${r.digest} hashes to ${digest}: nothing was applied; check the registry`,
        { terminal: true },
      );
    }
    if (r.kind === 'tag' && r.digest !== undefined && digest !== r.digest) {
      return fail(
        Reason.ArtifactTagMoved,
        `artifact ${artifact}: tag ${r.tag} moved from ${r.digest} (spec.source.oci.ref.digest) to ${digest}: nothing was applied; set ref.digest to the new digest to accept it, or drop ref.digest to follow the tag`,
        { terminal: true },
      );
    }
    return ok({ manifest: manifest.value, digest, revision: formatOciRevision(tag, digest) });
  }

  async function fetch(
    source: Spec['source'],
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Result<FetchedSource>> {
    const path = validatePackagePath(source.path);
    const opened = open(source, credentials, signal);
    if (!opened.ok) return opened;
    const { oci, artifact, client, auth: a } = opened.value;
    try {
      if (!path.ok) return path;
      const resolved = await resolveManifest(client, opened.value.ref, artifact);
      if (!resolved.ok) return resolved;
      const { manifest, digest, revision } = resolved.value;
      const base = await store.base(
        artifact,
        a?.username !== undefined || a?.identityToken !== undefined
          ? [a.username, a.password, a.identityToken]
          : undefined,
      );
      const got = await store.checkout(base, digest.slice('sha256:'.length), artifact, (staging) =>
        unpackArtifact(client, manifest, staging, artifact, oci.layerSelector),
      );
      if (!got.ok)
        return { ok: false, failure: { ...got.failure, message: `${got.failure.message} (revision ${revision})` } };
      const dir = got.value;
      const files = (await builtPackageAt(dir, path.value)) ? ok([]) : await readPackageFiles(dir, path.value, limits);
      if (!files.ok)
        return { ok: false, failure: { ...files.failure, message: `${files.failure.message} (revision ${revision})` } };
      log.debug({ artifact, revision, files: files.value.length }, 'oci source fetched');
      return ok({ revision, commit: digest, files: files.value, checkoutRoot: dir, packagePath: path.value });
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  /** The revision (`tag@sha256:…`, or the digest) the ref names now: one manifest read, no layer downloaded. */
  async function resolveArtifact(
    source: Spec['source'],
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Result<string>> {
    const opened = open(source, credentials, signal);
    if (!opened.ok) return opened;
    try {
      const resolved = await resolveManifest(opened.value.client, opened.value.ref, opened.value.artifact);
      return resolved.ok ? ok(resolved.value.revision) : resolved;
    } finally {
      await opened.value.client.close().catch(() => undefined);
    }
  }

  /** The artifact's one layer, downloaded (verified against its digest) and unpacked into `staging`. */
  async function unpackArtifact(
    client: RegistryClient,
    fetched: { body: Buffer; contentType: string | undefined; digest: string },
    staging: string,
    artifact: string,
    selector: { mediaType?: string | undefined; operation?: string | undefined } | undefined,
  ): Promise<Result<void>> {
    const manifest = parseManifest(fetched.body.toString('utf8'), fetched.contentType, artifact);
    if (!manifest.ok) return manifest;
    const layer = chooseLayer(manifest.value, selector, artifact);
    if (!layer.ok) return layer;
    const size = checkLayerSize(layer.value, config.ociMaxLayerBytes, artifact);
    if (!size.ok) return size;
    const blob = `${staging}-blob`; // beside the staging tree, under the store's staging prefix
    try {
      const downloaded = await client.downloadBlob(layer.value, blob, artifact);
      if (!downloaded.ok) return downloaded;
      try {
        return await unpackLayer(blob, staging, artifact, config.ociMaxLayerBytes * 4);
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        return fail(
          Reason.ArtifactMediaTypeUnsupported,
          `artifact ${artifact}: layer ${layer.value.digest} is not a readable gzip tarball (${typeof code === 'string' ? code : 'unreadable'}): push it again`,
          { terminal: true },
        );
      }
    } finally {
      await rm(blob, { force: true });
    }
  }

  return { fetch, resolveArtifact };
}
