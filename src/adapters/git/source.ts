import { join } from 'node:path';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import { credentialFingerprint, loadFingerprintKey } from './auth.ts';
import type { GitAuth } from './auth.ts';
import { cachePaths, ensureCacheRepo, exists, fetchCommit, hasCommit, removeTree } from './cache.ts';
import { chooseEvictions, listCache, type EvictionPolicy } from './evict.ts';
import { withGitOperation } from './git-command.ts';
import { formatRevision, lsRemoteArgs, parseLsRemote, selectRef } from './refs.ts';
import {
  checkoutName,
  forgetPromisor,
  pathRevision,
  sparseCheckoutCommit,
  sparseSet,
  whole,
  WHOLE_TREE,
  type SparseSet,
} from './sparse-checkout.ts';
import { WholeCheckouts, wholeCheckoutDir } from './whole-checkouts.ts';
import type { ResolvedRef } from './refs.ts';
import { validateRef, validateSourceURL } from './validate.ts';
import type { RefSpec, SourceRef, SourceURL } from './validate.ts';

/**
 * The git half of pipeline step 2: resolve a ref to a commit, then hand out a read-only
 * checkout of that commit from a cache shared by every PackageSync with the same URL. Concurrent callers for
 * the same URL and commit share one fetch; fetches into the same cache repo run one at a time (git's shallow
 * file is locked per fetch).
 */

export interface GitFetcherOptions {
  /**
   * Where cache repos and checkouts live. One fetcher per cache root: fetches are serialised per repo inside
   * this process only (the operator runs one leader; two fetchers on one root may collide on git's locks).
   */
  cacheRoot: string;
  /** Where per-operation secret material lives (default `<cacheRoot>/tmp`); an in-memory volume is best. */
  tmpRoot?: string;
  /** Deadline of one git operation (ls-remote, or fetch + checkout). Default 2 minutes. */
  timeoutMs?: number;
  /** Accept plain http:// URLs (off by default; tests use it for the loopback server). */
  allowInsecureHttp?: boolean;
  /**
   * How long a resolved ref is reused by other callers with the same URL, credentials and ref (default 0:
   * only concurrent calls share one `git ls-remote`). A fleet of PackageSyncs on one repository then costs
   * about one ls-remote per this period instead of one per PackageSync; `forget(url)` (a push, a requested
   * reconcile) ends the reuse at once.
   */
  refCacheTtlMs?: number;
  /** Commit-and-path memo entries kept (default SPARSE_MEMO_MAX); tests make it small. */
  sparseMemoMax?: number;
  /** Bounds of the cache on disk (evict.ts); default: unbounded. */
  eviction?: EvictionPolicy;
  /** Called with what an eviction removed (for a log line). */
  onEvicted?: (removed: { paths: number; bytes: number }) => void;
  /**
   * Eviction's clock (default Date.now): what "used within minIdleMs" measures. Tests drive it, so that the
   * rule is checked, not how fast a loaded machine gets from a fetch to the next eviction.
   */
  clock?: () => number;
}

export interface GitCallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * The package's path (validated): fetch and check out only what it reads (sparse-checkout.ts). Unset or
   * ".": the whole tree.
   */
  path?: string;
}

export interface Checkout {
  /** Read-only directory holding the commit's tree, or the package's part of it (no .git). */
  dir: string;
  commit: string;
  /** What the checkout holds: the package's sparse set (["."] = the whole tree). */
  paths: string[];
  /** Digest of the object ids of `paths` at the commit: unchanged by commits that touch none of them. */
  pathRevision: string | undefined;
}

export interface GitFetchStats {
  lsRemotes: number;
  /** `git fetch` runs: a checkout served from the cache does not count. */
  fetches: number;
  checkouts: number;
  cacheHits: number;
  /** Checkouts and cache repos removed to keep the cache inside its bounds. */
  evictions: number;
  /** Commit-and-path memo entries held now (bounded: sparseMemoMax). */
  memoEntries?: number;
}

export interface GitFetcher {
  resolveRef(
    url: string,
    ref: RefSpec | SourceRef | undefined,
    auth: GitAuth | undefined,
    opts?: GitCallOptions,
  ): Promise<Result<ResolvedRef>>;
  fetchRevision(
    url: string,
    commit: string,
    auth: GitAuth | undefined,
    opts?: GitCallOptions,
  ): Promise<Result<Checkout>>;
  /** Drops resolved refs of this URL (reused or in flight), so the next resolve asks the server. */
  forget(url: string): void;
  /**
   * The path revision of `paths` at `commit`, from the cache repo alone (no network); undefined when that
   * commit's trees are not there (evicted, never fetched) or a path does not exist at it.
   */
  pathRevisionAt(url: string, auth: GitAuth | undefined, commit: string, paths: string[]): Promise<string | undefined>;
  stats(): GitFetchStats;
  /** Applies the eviction policy now (it also runs by itself after new checkouts); resolves when done. */
  evict(): Promise<void>;
}

interface SharedResolve {
  url: string;
  result: Promise<Result<ResolvedRef>>;
  /** The signal of the call that runs it: a failure after it aborted says nothing to the others. */
  signal: AbortSignal | undefined;
  /** When the result came back; undefined while in flight. */
  at?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
/** Commit-and-path memo entries kept (a few hundred bytes each): two revisions of a 10,000-unit fleet and more. */
const SPARSE_MEMO_MAX = 50_000;
/** Eviction walks the whole cache: after a new checkout, not more often than this. */
const EVICTION_EVERY_MS = 30_000;

export function createGitFetcher(options: GitFetcherOptions): GitFetcher {
  const tmpRoot = options.tmpRoot ?? join(options.cacheRoot, 'tmp');
  const allowInsecureHttp = options.allowInsecureHttp === true;
  const counters: GitFetchStats = { lsRemotes: 0, fetches: 0, checkouts: 0, cacheHits: 0, evictions: 0 };
  /** When this process last used each checkout and cache repo (evict.ts reads it). */
  const used = new Map<string, number>();
  const clock = options.clock ?? Date.now;
  const touch = (...paths: string[]) => {
    const now = clock();
    for (const p of paths) used.set(p, now);
  };
  /**
   * Whether a checkout this process used is certainly still on disk, without asking the file system: only this
   * process evicts (one fetcher per cache root), and never a checkout used within the policy's minIdleMs (evict.ts;
   * a cache repo may go sooner, its checkouts do not go with it). A settled fleet's checks then cost no lstat each
   * (issue 18: idle CPU).
   */
  const surelyPresent = (dir: string): boolean => {
    const last = used.get(dir);
    if (last === undefined) return false;
    return !options.eviction || clock() - last < options.eviction.minIdleMs;
  };
  let evicting: Promise<void> | undefined;
  let lastEviction = 0;
  const inFlight = new Map<string, Promise<Result<Checkout>>>();
  /**
   * `<cache base>\n<commit>\n<path>` → the sparse set and path revision found for it (a few hundred bytes each),
   * and the checkout that serves it when that is the commit's whole tree.
   */
  const sparse = new Map<string, { set: { paths: string[] }; revision: string | undefined; dir?: string }>();
  /**
   * Remembers what a commit and path need: the set's paths only (a set's lazy blob list holds the commit's whole
   * listing, which must not live as long as this memo), the oldest forgotten past SPARSE_MEMO_MAX (a commit a
   * minute on a fleet of 500 units is 30,000 entries an hour).
   */
  const memoize = (key: string, set: SparseSet, revision: string | undefined, dir?: string) => {
    sparse.delete(key);
    sparse.set(key, { set: { paths: set.paths }, revision, ...(dir ? { dir } : {}) });
    if (sparse.size > (options.sparseMemoMax ?? SPARSE_MEMO_MAX)) sparse.delete(sparse.keys().next().value!);
  };
  /** A fleet's packages of one commit, read from its whole checkout (whole-checkouts.ts). */
  const fleet = new WholeCheckouts();
  const repoLocks = new Map<string, Promise<unknown>>();
  const resolves = new Map<string, SharedResolve>();
  const refCacheTtlMs = options.refCacheTtlMs ?? 0;
  let fingerprintKey: Promise<Buffer> | undefined;
  const fingerprint = async (auth: GitAuth | undefined): Promise<string> =>
    credentialFingerprint(auth, await (fingerprintKey ??= loadFingerprintKey(options.cacheRoot)));

  const operation = (source: SourceURL, auth: GitAuth | undefined, opts: GitCallOptions = {}) => ({
    tmpRoot,
    source,
    auth,
    allowInsecureHttp,
    timeoutMs: opts.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });

  /** Runs `fn` after every earlier task on the same cache repo has settled. */
  async function serialised<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = repoLocks.get(key) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.catch(() => undefined);
    repoLocks.set(key, tail);
    try {
      return await run;
    } finally {
      if (repoLocks.get(key) === tail) repoLocks.delete(key);
    }
  }

  async function checkoutOf(
    source: SourceURL,
    commit: string,
    credential: string,
    auth: GitAuth | undefined,
    opts?: GitCallOptions,
  ): Promise<Result<Checkout>> {
    const paths = cachePaths(options.cacheRoot, source.url, credential);
    const path = opts?.path ?? WHOLE_TREE;
    // what this commit and path were found to need, once worked out (sparse-checkout.ts): a hit needs no git
    const memo = sparse.get(`${paths.base}\n${commit}\n${path}`);
    const known = memo && (memo.dir ?? join(paths.checkouts, checkoutName(commit, memo.set.paths)));
    if (memo && known && (surelyPresent(known) || (await exists(known)))) {
      touch(known, paths.repo);
      counters.cacheHits++;
      return ok({ dir: known, commit, paths: memo.set.paths, pathRevision: memo.revision });
    }
    // a fleet's next package of a commit already checked out whole: no git, no lock (a restart's 10,000 reads)
    const served = await fleet.plainPackage(paths, commit, path);
    if (served) {
      memoize(`${paths.base}\n${commit}\n${path}`, served.set, served.pathRevision, served.dir);
      touch(served.dir, paths.repo);
      counters.cacheHits++;
      return ok({ dir: served.dir, commit, paths: served.set.paths, pathRevision: served.pathRevision });
    }
    return serialised(paths.base, () =>
      withGitOperation(operation(source, auth, opts), async (op) => {
        try {
          await ensureCacheRepo(op, paths, source.url);
        } catch (err) {
          return { ok: false, failure: op.failure(err, 'initialising the cache for') };
        }
        // the whole tree is fetched whole, as before; a package path gets the commit and its trees only, and
        // the blobs it reads come with its sparse checkout
        const missing = !(await hasCommit(op, paths.repo, commit));
        if (missing) {
          counters.fetches++;
          const filter = path === WHOLE_TREE ? [] : ['--filter=blob:none'];
          const fetched = await fetchCommit(op, paths.repo, source.url, commit, filter);
          await forgetPromisor(paths.repo);
          if (!fetched.ok) return fetched;
        }
        let set: SparseSet;
        try {
          const listed = path === WHOLE_TREE ? undefined : await fleet.listing(op, paths, commit);
          set = await sparseSet(op, paths.repo, source.url, commit, path, listed);
        } catch (err) {
          return { ok: false, failure: op.failure(err, `reading the package's kustomizations at ${commit} from`) };
        }
        const revision = set.revision ?? (await pathRevision(op, paths.repo, commit, set.paths));
        // many packages of one commit (a fleet in one repository): one whole checkout serves them all, instead of
        // a fetch of blobs and a checkout per package
        const wholeDir = wholeCheckoutDir(paths, commit);
        if (set.paths[0] !== WHOLE_TREE && (await fleet.servedWhole(paths, commit, path))) {
          if (!(await exists(wholeDir))) {
            const made = await sparseCheckoutCommit(
              op,
              paths,
              source.url,
              commit,
              whole(),
              missing && path === WHOLE_TREE,
            );
            if (!made.ok) return made;
            counters.checkouts++;
          } else counters.cacheHits++;
          touch(wholeDir, paths.repo);
          memoize(`${paths.base}\n${commit}\n${path}`, set, revision, wholeDir);
          return ok({ dir: wholeDir, commit, paths: set.paths, pathRevision: revision });
        }
        memoize(`${paths.base}\n${commit}\n${path}`, set, revision);
        const dir = join(paths.checkouts, checkoutName(commit, set.paths));
        touch(dir, paths.repo);
        if (await exists(dir)) {
          counters.cacheHits++;
          return ok({ dir, commit, paths: set.paths, pathRevision: revision });
        }
        const checkout = await sparseCheckoutCommit(op, paths, source.url, commit, set, missing && path === WHOLE_TREE);
        if (!checkout.ok) return checkout;
        counters.checkouts++;
        touch(dir, paths.repo);
        scheduleEviction();
        return ok({ dir: checkout.value, commit, paths: set.paths, pathRevision: revision });
      }),
    );
  }

  /** After a new checkout, at most once per EVICTION_EVERY_MS, in the background. */
  function scheduleEviction(): void {
    if (!options.eviction || evicting || clock() - lastEviction < EVICTION_EVERY_MS) return;
    void evict();
  }

  function evict(): Promise<void> {
    const policy = options.eviction;
    if (!policy) return Promise.resolve();
    evicting ??= (async () => {
      lastEviction = clock();
      const chosen = chooseEvictions(await listCache(options.cacheRoot, used), policy, clock());
      let bytes = 0;
      for (const entry of chosen) {
        // one at a time with the fetches into the same cache repo; a checkout still unused when its turn comes
        await serialised(entry.base, async () => {
          if (entry.kind === 'checkout' && clock() - (used.get(entry.path) ?? 0) < policy.minIdleMs) return;
          await removeTree(entry.path);
          used.delete(entry.path);
          counters.evictions++;
          bytes += entry.bytes;
        });
      }
      if (chosen.length > 0) options.onEvicted?.({ paths: chosen.length, bytes });
    })()
      .catch(() => undefined) // a cache that cannot be cleaned now is tried again after the next checkout
      .finally(() => (evicting = undefined));
    return evicting;
  }

  async function fetchRevision(
    url: string,
    commit: string,
    auth: GitAuth | undefined,
    opts?: GitCallOptions,
  ): Promise<Result<Checkout>> {
    const source = validateSourceURL(url, { allowInsecureHttp });
    if (!source.ok) return source;
    const valid = validateRef({ commit });
    if (!valid.ok) return valid;
    const id = (valid.value as { commit: string }).commit;
    let credential: string;
    try {
      credential = await fingerprint(auth);
    } catch (err) {
      return fail(Reason.FetchFailed, `cannot use the git cache directory: ${errorName(err)}`);
    }
    const key = `${source.value.url}\n${credential}\n${id}\n${opts?.path ?? WHOLE_TREE}`;
    const running = inFlight.get(key);
    if (running) return running;
    const promise = checkoutOf(source.value, id, credential, auth, opts)
      .catch((err: unknown) =>
        fail<Checkout>(Reason.FetchFailed, `fetching ${id} from ${url} failed: ${errorName(err)}`),
      )
      .finally(() => inFlight.delete(key));
    inFlight.set(key, promise);
    return promise;
  }

  async function resolveRef(
    url: string,
    ref: RefSpec | SourceRef | undefined,
    auth: GitAuth | undefined,
    opts?: GitCallOptions,
  ): Promise<Result<ResolvedRef>> {
    const source = validateSourceURL(url, { allowInsecureHttp });
    if (!source.ok) return source;
    const valid = validateRef(ref);
    if (!valid.ok) return valid;
    const wanted = valid.value;
    if (wanted !== undefined && 'commit' in wanted) {
      // ls-remote lists only refs; the only proof a pinned commit exists is fetching it (which the next step needs anyway).
      const checkout = await fetchRevision(url, wanted.commit, auth, opts);
      if (!checkout.ok) return checkout;
      return ok({ commit: wanted.commit, refLabel: undefined, revision: formatRevision(wanted.commit, undefined) });
    }
    let credential: string;
    try {
      credential = await fingerprint(auth);
    } catch (err) {
      return fail(Reason.FetchFailed, `cannot use the git cache directory: ${errorName(err)}`);
    }
    // Same URL, credentials and ref: the answer is the same, so concurrent callers (and, within the TTL,
    // later ones) share one ls-remote. Keyed by credential too: a result obtained with one tenant's
    // credentials is never handed to a caller without them.
    const key = `${source.value.url}\n${credential}\n${JSON.stringify(wanted ?? null)}`;
    const shared = resolves.get(key);
    if (shared && (shared.at === undefined || Date.now() - shared.at < refCacheTtlMs)) {
      const result = await shared.result;
      // the call we joined was cancelled by its own caller: that proves nothing about this one
      if (result.ok || !shared.signal?.aborted || opts?.signal?.aborted) return result;
    }
    const entry: SharedResolve = {
      url: source.value.url,
      signal: opts?.signal,
      result: listRefs(source.value, wanted, auth, opts),
    };
    resolves.set(key, entry);
    const result = await entry.result;
    if (resolves.get(key) === entry) {
      if (result.ok && refCacheTtlMs > 0) entry.at = Date.now();
      else resolves.delete(key);
    }
    return result;
  }

  function listRefs(
    source: SourceURL,
    wanted: Exclude<SourceRef, { commit: string }> | undefined,
    auth: GitAuth | undefined,
    opts?: GitCallOptions,
  ): Promise<Result<ResolvedRef>> {
    counters.lsRemotes++;
    return withGitOperation(operation(source, auth, opts), async (op) => {
      let stdout: string;
      try {
        stdout = await op.git().raw(lsRemoteArgs(source.url, wanted));
      } catch (err) {
        return { ok: false, failure: op.failure(err, 'listing refs of') };
      }
      return selectRef(parseLsRemote(stdout), wanted, source.url);
    }).catch((err: unknown) =>
      fail<ResolvedRef>(Reason.FetchFailed, `listing refs of ${source.url} failed: ${errorName(err)}`),
    );
  }

  function forget(url: string): void {
    const normalised = validateSourceURL(url, { allowInsecureHttp });
    for (const [key, entry] of resolves) {
      if (entry.url === url || (normalised.ok && entry.url === normalised.value.url)) resolves.delete(key);
    }
  }

  async function pathRevisionAt(
    url: string,
    auth: GitAuth | undefined,
    commit: string,
    paths: string[],
  ): Promise<string | undefined> {
    const source = validateSourceURL(url, { allowInsecureHttp });
    const valid = validateRef({ commit });
    if (!source.ok || !valid.ok) return undefined;
    const cache = cachePaths(options.cacheRoot, source.value.url, await fingerprint(auth));
    if (!(await exists(cache.repo))) return undefined;
    const found = await withGitOperation(operation(source.value, auth), async (op) =>
      ok(await pathRevision(op, cache.repo, (valid.value as { commit: string }).commit, paths)),
    ).catch(() => undefined);
    return found?.ok ? found.value : undefined;
  }

  return {
    resolveRef,
    fetchRevision,
    forget,
    pathRevisionAt,
    stats: () => ({ ...counters, memoEntries: sparse.size }),
    evict,
  };
}

/** Only the error's class and code: an unexpected error's message could quote a path or a value. */
function errorName(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const name = err instanceof Error ? err.name : 'error';
  return typeof code === 'string' ? `${name} ${code}` : name;
}
