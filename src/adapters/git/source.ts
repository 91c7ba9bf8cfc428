import { join } from 'node:path';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import { credentialFingerprint, loadFingerprintKey } from './auth.ts';
import type { GitAuth } from './auth.ts';
import { cachePaths, ensureCacheRepo, exists, fetchCommit, hasCommit } from './cache.ts';
import { CacheEviction } from './cache-eviction.ts';
import { errorName } from './errors.ts';
import type { EvictionPolicy } from './evict.ts';
import { withGitOperation } from './git-command.ts';
import { RefResolutions } from './ref-resolution.ts';
import { formatRevision } from './refs.ts';
import { RepoLocks } from './repo-locks.ts';
import {
  checkoutName,
  forgetPromisor,
  pathRevision,
  sparseCheckoutCommit,
  sparseSet,
  whole,
  WHOLE_TREE,
  type SparseSet,
  type TreeListing,
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
  /** Checkouts found from the memo alone (no git, no lock). */
  memoHits?: number;
  /** Packages first read from their commit's whole checkout and listing, without git or the lock. */
  servedWithoutGit?: number;
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
  /**
   * This URL's refs may have moved at `since` (default now): resolves started before it are not reused
   * (ref-resolution.ts).
   */
  forget(url: string, since?: number): void;
  /**
   * The path revision of `paths` at `commit`, from the cache repo alone (no network); undefined when that
   * commit's trees are not there (evicted, never fetched) or a path does not exist at it.
   */
  pathRevisionAt(url: string, auth: GitAuth | undefined, commit: string, paths: string[]): Promise<string | undefined>;
  stats(): GitFetchStats;
  /** Applies the eviction policy now (it also runs by itself after new checkouts); resolves when done. */
  evict(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 120_000;
/**
 * Commit-and-path memo entries kept, least recently used forgotten first. An entry is ~580 bytes of heap
 * (measured: the key, the path, the revision and the whole checkout's directory as strings), so 20,000 are
 * ~11 MiB. A unit reading an unchanged commit hits its own entry every interval, so the live ones stay; what a
 * unit needs is one entry for its current commit (and one for the next while it moves): 20,000 is two
 * revisions of issue 18's 10,000-unit fleet. 50,000 before was ~28 MiB, reached after ~8 hours of a commit a
 * minute on 500 units, and hits did not refresh an entry, so the soak read it as heap that grew all run.
 */
const SPARSE_MEMO_MAX = 20_000;

export function createGitFetcher(options: GitFetcherOptions): GitFetcher {
  const tmpRoot = options.tmpRoot ?? join(options.cacheRoot, 'tmp');
  const allowInsecureHttp = options.allowInsecureHttp === true;
  const counters: GitFetchStats = { lsRemotes: 0, fetches: 0, checkouts: 0, cacheHits: 0, evictions: 0 };
  const locks = new RepoLocks();
  const eviction = new CacheEviction(
    {
      cacheRoot: options.cacheRoot,
      eviction: options.eviction,
      onEvicted: options.onEvicted,
      clock: options.clock ?? Date.now,
    },
    locks,
    counters,
  );
  const touch = (...paths: string[]) => eviction.touch(...paths);
  const surelyPresent = (dir: string) => eviction.surelyPresent(dir);
  const inFlight = new Map<string, Promise<Result<Checkout>>>();
  /**
   * `<cache base>\n<commit>\n<path>` → the sparse set and path revision found for it (~580 bytes each),
   * and the checkout that serves it when that is the commit's whole tree.
   */
  const sparse = new Map<string, { set: { paths: string[] }; revision: string | undefined; dir?: string }>();
  let memoHits = 0;
  let servedWithoutGit = 0;
  /**
   * Remembers what a commit and path need: the set's paths only (a set's lazy blob list holds the commit's whole
   * listing, which must not live as long as this memo), the least recently used forgotten past SPARSE_MEMO_MAX
   * (a commit a minute on a fleet of 500 units adds an entry per unit and commit it reconciles at).
   */
  const memoize = (key: string, set: SparseSet, revision: string | undefined, dir?: string) => {
    sparse.delete(key);
    sparse.set(key, { set: { paths: set.paths }, revision, ...(dir ? { dir } : {}) });
    if (sparse.size > (options.sparseMemoMax ?? SPARSE_MEMO_MAX)) sparse.delete(sparse.keys().next().value!);
  };
  /** A fleet's packages of one commit, read from its whole checkout (whole-checkouts.ts). */
  const fleet = new WholeCheckouts();
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

  const refs = new RefResolutions({
    allowInsecureHttp,
    refCacheTtlMs: options.refCacheTtlMs ?? 0,
    operation,
    counters,
  });

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
    const memoKey = `${paths.base}\n${commit}\n${path}`;
    const memo = sparse.get(memoKey);
    const known = memo && (memo.dir ?? join(paths.checkouts, checkoutName(commit, memo.set.paths)));
    if (memo && known && (surelyPresent(known) || (await exists(known)))) {
      touch(known, paths.repo);
      counters.cacheHits++;
      memoHits++;
      // re-inserted last: the entries forgotten first are those nobody read for longest (superseded commits)
      if (sparse.get(memoKey) === memo) {
        sparse.delete(memoKey);
        sparse.set(memoKey, memo);
      }
      return ok({ dir: known, commit, paths: memo.set.paths, pathRevision: memo.revision });
    }
    // a fleet's next package of a commit already checked out whole: no git, no lock (a restart's 10,000 reads, a
    // fleet of kustomize overlays)
    const fromWhole = async (): Promise<Result<Checkout> | undefined> => {
      const served = await fleet.servedPackage(paths, commit, path);
      if (!served) return undefined;
      servedWithoutGit++;
      memoize(`${paths.base}\n${commit}\n${path}`, served.set, served.pathRevision, served.dir);
      touch(served.dir, paths.repo);
      counters.cacheHits++;
      return ok({ dir: served.dir, commit, paths: served.set.paths, pathRevision: served.pathRevision });
    };
    const early = await fromWhole();
    if (early) return early;
    fleet.ask(paths, commit, path);
    return locks.serialised(paths.base, async () => {
      // made while this one waited for the lock (a fleet asking at once): still no git
      const waited = await fromWhole();
      if (waited) return waited;
      return withGitOperation(operation(source, auth, opts), async (op) => {
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
        let listed: TreeListing | undefined;
        try {
          listed = path === WHOLE_TREE ? undefined : await fleet.listing(op, paths, commit);
          set = await sparseSet(op, paths.repo, source.url, commit, path, listed);
        } catch (err) {
          return { ok: false, failure: op.failure(err, `reading the package's kustomizations at ${commit} from`) };
        }
        const revision = set.revision ?? (await pathRevision(op, paths.repo, commit, set.paths));
        // many packages of one commit (a fleet in one repository): one whole checkout serves them all, instead of
        // a fetch of blobs and a checkout per package
        const wholeDir = wholeCheckoutDir(paths, commit);
        if (listed && set.paths[0] !== WHOLE_TREE && (await fleet.servedWhole(paths, commit, path, listed))) {
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
        eviction.schedule();
        return ok({ dir: checkout.value, commit, paths: set.paths, pathRevision: revision });
      });
    });
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
    return refs.resolve(source.value, credential, wanted, auth, opts);
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
    forget: (url, since) => refs.forget(url, since),
    pathRevisionAt,
    stats: () => ({ ...counters, memoEntries: sparse.size, memoHits, servedWithoutGit }),
    evict: () => eviction.evict(),
  };
}
