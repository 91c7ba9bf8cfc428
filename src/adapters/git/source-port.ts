import type { Logger } from 'pino';
import { durationMs } from '../../api/packagesync.ts';
import type { Spec } from '../../api/packagesync.ts';
import type { ControllerConfig } from '../../config/controller-config.ts';
import type { SourceFile } from '../../core/render/types.ts';
import { ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import { authFromSecret } from './auth.ts';
import { builtPackageAt } from '../render/build.ts';
import { readPackageFiles } from './read-package.ts';
import { createGitFetcher } from './source.ts';
import { verifySource } from './verify-source.ts';
import type { AllowedKeys } from '../../core/signers.ts';
import { join } from 'node:path';
import type { GitFetcher } from './source.ts';
import { ensurePrivateRoot, sweepStaleTemp } from './sweep.ts';
import { validatePackagePath, validateRef, validateSourceURL } from './validate.ts';

/**
 * The engine's SourcePort over git: validate the spec's source, turn the Secret into auth material, resolve
 * the ref, fetch (shared cache), and read the package's manifests. Validation comes first, so nothing the
 * spec says reaches git unchecked.
 */

export interface FetchedSource {
  /** e.g. main@sha1:3f2a… */
  revision: string;
  commit: string;
  /** The package's manifest files (what a plain package renders; none for a kustomize or Helm package). */
  files: SourceFile[];
  /** The read-only checkout of the commit, for tools that read more than the package (kustomize bases, charts). */
  checkoutRoot: string;
  /** The package's path inside the checkout, validated: "." or a relative path. */
  packagePath: string;
  /**
   * The revision of what the package reads (spec.path and the kustomize bases it reaches: a digest of their
   * git object ids, sparse-checkout.ts): unchanged by a commit that touches none of them. Undefined when
   * unknown (the revision then decides alone).
   */
  pathRevision?: string;
  /**
   * Whether the package read the same at another commit (e.g. the last applied one): same object ids for
   * every path it reads. False when that cannot be told without the network (the commit is not cached).
   */
  samePackageAt?(commit: string): Promise<boolean>;
  /**
   * Set when the fetch was asked to leave the files for later (`FetchOptions.deferFiles`): `files` is empty until
   * this reads them (engine/reconcile.ts reads them only when it renders: ADR 0031).
   */
  readFiles?(): Promise<Result<SourceFile[]>>;
}

export interface FetchOptions {
  /** Resolve and check out, but read the package's files only when `readFiles` is called. */
  deferFiles?: boolean;
}

export interface SourcePort {
  /**
   * Resolves the ref to a commit, fetches it (from cache when unchanged) and reads the package files.
   * `credentials` comes from the PackageSync's own namespace; the source never falls back to others.
   */
  fetch(
    source: Spec['source'],
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
    opts?: FetchOptions,
  ): Promise<Result<FetchedSource>>;
  /**
   * The commit the ref names now, without fetching it (concurrent and recent callers share one ls-remote, as
   * fetch's do). A pinned commit is itself: only fetch proves that it exists.
   */
  resolve?(
    source: Spec['source'],
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Result<string>>;
  /**
   * spec.source.oci: the revision (`tag@sha256:…`) the ref names now, from one manifest read (PackageSyncSet
   * rollouts pin it by digest, docs/adr/0042). Kept apart from resolve, which the engine's unchanged check uses.
   */
  resolveArtifact?(
    source: Spec['source'],
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Result<string>>;
  /**
   * This URL's refs may have moved at `since` (default now): what was learnt of them before is not reused, and
   * the next fetch asks the git server unless a resolve started after `since` already did.
   */
  forget?(url: string, since?: number): void;
  /** spec.source.verify: the fetched commit (or tag) is signed by a key `keys` allows (verify-source.ts). */
  verify?(
    source: Spec['source'],
    fetched: FetchedSource,
    keys: AllowedKeys,
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Result<void>>;
}

export type GitSourceConfig = Pick<
  ControllerConfig,
  'gitCacheDir' | 'gitTimeout' | 'allowInsecureHttp' | 'maxFiles' | 'maxFileBytes' | 'maxTotalBytes'
> &
  Partial<Pick<ControllerConfig, 'gitRefCacheTtl' | 'gitCacheMaxBytes' | 'gitCacheMaxAge'>>;

/** A checkout used this recently may be in use (a render reading it): eviction never removes it. */
const IN_USE_MS = 5 * 60_000;

export async function createGitSource(
  config: GitSourceConfig,
  log: Logger,
): Promise<SourcePort & { fetcher: GitFetcher }> {
  await ensurePrivateRoot(config.gitCacheDir);
  // Leftovers of a crashed process: secret material, half-made checkouts, stale git locks.
  const swept = await sweepStaleTemp(config.gitCacheDir);
  if (swept.length > 0) log.info({ removed: swept.length }, 'removed stale git cache leftovers');

  const allowInsecureHttp = config.allowInsecureHttp;
  const fetcher = createGitFetcher({
    cacheRoot: config.gitCacheDir,
    timeoutMs: durationMs(config.gitTimeout),
    allowInsecureHttp,
    refCacheTtlMs: config.gitRefCacheTtl === undefined ? 0 : durationMs(config.gitRefCacheTtl),
    ...(config.gitCacheMaxBytes !== undefined || config.gitCacheMaxAge !== undefined
      ? {
          eviction: {
            maxBytes: config.gitCacheMaxBytes ?? Number.MAX_SAFE_INTEGER,
            maxIdleMs:
              config.gitCacheMaxAge === undefined ? Number.MAX_SAFE_INTEGER : durationMs(config.gitCacheMaxAge),
            minIdleMs: IN_USE_MS,
          },
        }
      : {}),
    onEvicted: (removed) => log.info(removed, 'git cache: removed least recently used checkouts to stay in bounds'),
  });
  const limits = { maxFiles: config.maxFiles, maxFileBytes: config.maxFileBytes, maxTotalBytes: config.maxTotalBytes };

  async function fetch(
    source: Spec['source'],
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
    opts: FetchOptions = {},
  ): Promise<Result<FetchedSource>> {
    const url = validateSourceURL(source.url ?? '', { allowInsecureHttp });
    if (!url.ok) return url;
    const ref = validateRef(source.ref);
    if (!ref.ok) return ref;
    const path = validatePackagePath(source.path);
    if (!path.ok) return path;
    const auth = authFromSecret(credentials);
    if (!auth.ok) return auth;

    // a pinned commit is proven by fetching it: of the package's path alone, as the next line wants it
    const resolved = await fetcher.resolveRef(url.value.url, ref.value, auth.value, { signal, path: path.value });
    if (!resolved.ok) return resolved;
    const { commit, revision } = resolved.value;
    const checkout = await fetcher.fetchRevision(url.value.url, commit, auth.value, { signal, path: path.value });
    if (!checkout.ok) return checkout;
    // a kustomize or Helm package: the tool reads what it names (bases elsewhere, templates), not every file
    const readFiles = async (): Promise<Result<SourceFile[]>> => {
      const files = (await builtPackageAt(checkout.value.dir, path.value))
        ? ok([])
        : await readPackageFiles(checkout.value.dir, path.value, limits);
      if (!files.ok)
        return { ok: false, failure: { ...files.failure, message: `${files.failure.message} (revision ${revision})` } };
      log.debug({ url: url.value.url, revision, files: files.value.length }, 'source read');
      return files;
    };
    const files = opts.deferFiles ? ok([]) : await readFiles();
    if (!files.ok) return files;
    const { paths, pathRevision } = checkout.value;
    return ok({
      revision,
      commit,
      files: files.value,
      ...(opts.deferFiles ? { readFiles } : {}),
      checkoutRoot: checkout.value.dir,
      packagePath: path.value,
      ...(pathRevision ? { pathRevision } : {}),
      samePackageAt: async (other: string) =>
        pathRevision !== undefined &&
        (await fetcher.pathRevisionAt(url.value.url, auth.value, other, paths)) === pathRevision,
    });
  }

  async function resolve(
    source: Spec['source'],
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Result<string>> {
    const url = validateSourceURL(source.url ?? '', { allowInsecureHttp });
    if (!url.ok) return url;
    const ref = validateRef(source.ref);
    if (!ref.ok) return ref;
    if (ref.value !== undefined && 'commit' in ref.value) return ok(ref.value.commit);
    const auth = authFromSecret(credentials);
    if (!auth.ok) return auth;
    const resolved = await fetcher.resolveRef(url.value.url, ref.value, auth.value, { signal });
    return resolved.ok ? ok(resolved.value.commit) : resolved;
  }

  async function verify(
    source: Spec['source'],
    fetched: FetchedSource,
    keys: AllowedKeys,
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Result<void>> {
    if (!source.verify) return ok(undefined);
    const url = validateSourceURL(source.url ?? '', { allowInsecureHttp });
    if (!url.ok) return url;
    const auth = authFromSecret(credentials);
    if (!auth.ok) return auth;
    const ref = source.ref;
    const label = fetched.revision.split('@')[0];
    return verifySource({
      verify: source.verify,
      url: url.value,
      auth: auth.value,
      commit: fetched.commit,
      checkoutRoot: fetched.checkoutRoot,
      tag: ref?.tag ?? (ref?.semver !== undefined ? label : undefined),
      keys,
      tmpRoot: join(config.gitCacheDir, 'tmp'),
      allowInsecureHttp,
      timeoutMs: durationMs(config.gitTimeout),
      signal,
    });
  }

  return { fetch, resolve, forget: (url, since) => fetcher.forget(url, since), verify, fetcher };
}
