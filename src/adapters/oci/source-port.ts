import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { durationMs, type Spec } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import type { ControllerConfig } from '../../config/controller-config.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import { checkLayerSize, chooseLayer, parseManifest } from '../../core/oci/artifact.ts';
import { registryAuthFromSecret, type RegistryAuth } from '../../core/oci/credentials.ts';
import { chooseSemverTag, formatOciRevision, validateOciRef } from '../../core/oci/ref.ts';
import { parseOciRepository } from '../../core/oci/reference.ts';
import { loadFingerprintKey } from '../git/auth.ts';
import { exists, makeReadOnly, removeTree, STAGING_PREFIX } from '../git/cache.ts';
import { chooseEvictions, listCache } from '../git/evict.ts';
import { readPackageFiles } from '../git/read-package.ts';
import type { FetchedSource, SourcePort } from '../git/source-port.ts';
import { validatePackagePath } from '../git/validate.ts';
import { builtPackageAt } from '../render/build.ts';
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

const IN_USE_MS = 5 * 60_000;
const EVICTION_EVERY_MS = 30_000;

export function createOciSource(config: OciSourceConfig, log: Logger): SourcePort {
  const root = config.gitCacheDir;
  const limits = { maxFiles: config.maxFiles, maxFileBytes: config.maxFileBytes, maxTotalBytes: config.maxTotalBytes };
  const inFlight = new Map<string, Promise<Result<string>>>();
  let lastEviction = 0;
  let fingerprintKey: Promise<Buffer> | undefined;
  /** Cache bases holding OCI checkouts (this process's; a restart leaves older ones to the git eviction). */
  const ociBases = new Set<string>();

  async function cacheBase(url: string, auth: RegistryAuth | undefined): Promise<string> {
    // a tenant whose credentials cannot read a private artifact must not get another tenant's copy of it
    const key = await (fingerprintKey ??= loadFingerprintKey(root));
    const who =
      auth?.username !== undefined || auth?.identityToken !== undefined
        ? createHmac('sha256', key)
            .update(JSON.stringify([auth.username, auth.password, auth.identityToken]))
            .digest('hex')
        : 'anonymous';
    return join(root, createHash('sha256').update(`${url}\n${who}`).digest('hex').slice(0, 32));
  }

  async function fetch(
    source: Spec['source'],
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Result<FetchedSource>> {
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
    const path = validatePackagePath(source.path);
    if (!path.ok) return path;
    const secretName = oci.secretRef?.name ?? oci.certSecretRef?.name ?? '';
    const auth = registryAuthFromSecret(credentials, repo.value.host, secretName);
    if (!auth.ok) return auth;

    const timeout = AbortSignal.any([signal, AbortSignal.timeout(durationMs(config.gitTimeout))]);
    const client = new RegistryClient(repo.value, {
      auth: auth.value,
      insecure: oci.insecure === true,
      signal: timeout,
    });
    try {
      const r = ref.value;
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
      const revision = formatOciRevision(tag, digest);
      const base = await cacheBase(artifact, auth.value);
      ociBases.add(base);
      const dir = join(base, 'checkouts', digest.slice('sha256:'.length));
      let unpacked = inFlight.get(dir);
      if (!unpacked) {
        unpacked = materialise(client, manifest.value, base, dir, artifact, oci.layerSelector).finally(() =>
          inFlight.delete(dir),
        );
        inFlight.set(dir, unpacked);
      }
      const got = await unpacked;
      if (!got.ok)
        return { ok: false, failure: { ...got.failure, message: `${got.failure.message} (revision ${revision})` } };
      // the eviction of the git cache reads a checkout's mtime as its last use
      const now = new Date();
      await utimes(dir, now, now).catch(() => undefined);
      const files = (await builtPackageAt(dir, path.value)) ? ok([]) : await readPackageFiles(dir, path.value, limits);
      if (!files.ok)
        return { ok: false, failure: { ...files.failure, message: `${files.failure.message} (revision ${revision})` } };
      log.debug({ artifact, revision, files: files.value.length }, 'oci source fetched');
      scheduleEviction();
      return ok({ revision, commit: digest, files: files.value, checkoutRoot: dir, packagePath: path.value });
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  async function materialise(
    client: RegistryClient,
    fetched: { body: Buffer; contentType: string | undefined; digest: string },
    base: string,
    dir: string,
    artifact: string,
    selector: { mediaType?: string | undefined; operation?: string | undefined } | undefined,
  ): Promise<Result<string>> {
    if (await exists(dir)) return ok(dir);
    const manifest = parseManifest(fetched.body.toString('utf8'), fetched.contentType, artifact);
    if (!manifest.ok) return manifest;
    const layer = chooseLayer(manifest.value, selector, artifact);
    if (!layer.ok) return layer;
    const size = checkLayerSize(layer.value, config.ociMaxLayerBytes, artifact);
    if (!size.ok) return size;
    const checkouts = join(base, 'checkouts');
    await mkdir(checkouts, { recursive: true });
    await writeFile(join(base, 'url'), `${artifact}\n`);
    const id = randomBytes(6).toString('hex');
    const blob = join(base, `${STAGING_PREFIX}blob-${id}`);
    const staging = join(checkouts, `${STAGING_PREFIX}${id}`);
    try {
      const downloaded = await client.downloadBlob(layer.value, blob, artifact);
      if (!downloaded.ok) return downloaded;
      await mkdir(staging, { recursive: true });
      let unpacked: Result<void>;
      try {
        unpacked = await unpackLayer(blob, staging, artifact, config.ociMaxLayerBytes * 4);
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        return fail(
          Reason.ArtifactMediaTypeUnsupported,
          `artifact ${artifact}: layer ${layer.value.digest} is not a readable gzip tarball (${typeof code === 'string' ? code : 'unreadable'}): push it again`,
          { terminal: true },
        );
      }
      if (!unpacked.ok) return unpacked;
      await makeReadOnly(staging);
      try {
        await rename(staging, dir);
      } catch (err) {
        if (!(await exists(dir))) throw err; // else: another process made the same digest first
      }
      return ok(dir);
    } finally {
      await rm(blob, { force: true });
      if (await exists(staging)) await removeTree(staging);
    }
  }

  /** The git cache's own eviction rules, over the OCI checkouts (never git's repos: their fetches hold locks). */
  function scheduleEviction(): void {
    if (config.gitCacheMaxBytes === undefined || Date.now() - lastEviction < EVICTION_EVERY_MS) return;
    lastEviction = Date.now();
    const policy = {
      maxBytes: config.gitCacheMaxBytes,
      maxIdleMs: config.gitCacheMaxAge === undefined ? Number.MAX_SAFE_INTEGER : durationMs(config.gitCacheMaxAge),
      minIdleMs: IN_USE_MS,
    };
    void (async () => {
      const all = await listCache(root, new Map());
      const oci = all.filter((e) => e.kind === 'checkout' && ociBases.has(e.base));
      for (const entry of chooseEvictions(oci, policy, Date.now())) await removeTree(entry.path);
    })().catch(() => undefined);
  }

  return { fetch };
}
