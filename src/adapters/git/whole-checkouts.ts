/**
 * A fleet of packages in one repository (Flux's benchmark shape: one GitRepository, thousands of paths): past
 * WHOLE_TREE_AFTER package paths of one commit, they are read from one checkout of the whole commit instead of
 * a sparse fetch and checkout each (sparse-checkout.ts), which source.ts serialises per repository: a restarted
 * controller spent seconds per unit there. The commit's tree is listed once while it is among the newest few,
 * and a package of a commit already checked out whole needs no git at all: a plain directory from the listing, a
 * kustomization with its files read from that checkout (a fleet of 1,000 overlays queued on the repo's lock for
 * a `git cat-file` each, ~4 units a second, before). A monorepo's few
 * packages keep their sparse checkouts (bench/RESULTS-monorepo.md). docs/adr/0028.
 */
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exists, type CachePaths } from './cache.ts';
import type { GitOperation } from './git-command.ts';
import {
  checkoutName,
  listTree,
  setFromListing,
  WHOLE_TREE,
  type SparseSet,
  type TreeListing,
} from './sparse-checkout.ts';

/** Commits whose tree listing (and paths asked) are kept in memory: the followed refs' newest ones. */
const LISTINGS_KEPT = 4;
/** Past this many package paths of one commit, they are read from one checkout of the whole commit. */
export const WHOLE_TREE_AFTER = 16;
/**
 * A commit of at most this many files is checked out whole from its second package path on: one fetch of all its
 * files costs about what one package's sparse fetch does (a round trip and git's processes, ~0.25 s on loopback),
 * and each further sparse fetch waits on the repository's lock. A rollout's first wave over 25 directories of a
 * small fleet repository queued 16 sparse fetches, ~4 s, before any reached the whole checkout.
 */
export const SMALL_TREE_FILES = 1000;

export const wholeCheckoutDir = (paths: CachePaths, commit: string) =>
  join(paths.checkouts, checkoutName(commit, [WHOLE_TREE]));

export class WholeCheckouts {
  /** `<cache base>\n<commit>` → its tree listing, least recently used first. */
  private readonly listings = new Map<string, Promise<TreeListing>>();
  /** `<cache base>\n<commit>` → the package paths asked for at it (up to WHOLE_TREE_AFTER + 1). */
  private readonly pathsAsked = new Map<string, Set<string>>();

  /** The commit's tree listing, listed once while it is among the newest few. Call with the repo's lock held. */
  listing(op: GitOperation, paths: CachePaths, commit: string): Promise<TreeListing> {
    const key = `${paths.base}\n${commit}`;
    let listed = this.listings.get(key);
    if (listed) {
      this.listings.delete(key); // re-inserted last: the least recently used goes first
    } else {
      listed = listTree(op, paths.repo, commit);
      listed.catch(() => this.listings.delete(key));
    }
    this.listings.set(key, listed);
    while (this.listings.size > LISTINGS_KEPT) this.listings.delete(this.listings.keys().next().value!);
    return listed;
  }

  /**
   * Records that a package path of this commit is wanted. Called when the request arrives, before the repo's lock:
   * a fleet asking at once (a controller's start, a new commit of a fleet's repository) has its whole checkout
   * made by the first package under the lock, not after WHOLE_TREE_AFTER sparse checkouts in a row while the rest
   * wait (session 21: ~9 s of serial git at a kustomize fleet's start).
   */
  ask(paths: CachePaths, commit: string, path: string): void {
    if (path === WHOLE_TREE) return;
    const key = `${paths.base}\n${commit}`;
    let asked = this.pathsAsked.get(key);
    if (!asked) {
      asked = new Set();
      this.pathsAsked.set(key, asked);
      while (this.pathsAsked.size > LISTINGS_KEPT) this.pathsAsked.delete(this.pathsAsked.keys().next().value!);
    }
    if (asked.size <= WHOLE_TREE_AFTER) asked.add(path);
  }

  /**
   * Whether this package path is read from the commit's whole checkout: it exists, or enough paths want it (more
   * than WHOLE_TREE_AFTER, or two of a commit of at most SMALL_TREE_FILES files).
   */
  async servedWhole(paths: CachePaths, commit: string, path: string, listing: TreeListing): Promise<boolean> {
    this.ask(paths, commit, path);
    const asked = this.pathsAsked.get(`${paths.base}\n${commit}`) ?? new Set<string>();
    return (
      asked.size > WHOLE_TREE_AFTER ||
      (asked.size > 1 && filesIn(listing) <= SMALL_TREE_FILES) ||
      (await exists(wholeCheckoutDir(paths, commit)))
    );
  }

  /**
   * A package of a commit whose whole checkout and listing are here already, found without git or the repo's lock:
   * a plain directory from the listing alone, a kustomization by the same walk as sparseSet with its kustomization
   * files read from the whole checkout (the commit's own files: regular files only, a symbolic link is left to
   * git). Undefined when anything else is the case (a chart, a reference out of the package's reach of the
   * listing, an unreadable file): sparseSet and the locked path work it out, as before.
   */
  async servedPackage(
    paths: CachePaths,
    commit: string,
    path: string,
  ): Promise<{ dir: string; set: SparseSet; pathRevision: string } | undefined> {
    const listed = this.listings.get(`${paths.base}\n${commit}`);
    if (!listed || path === WHOLE_TREE) return undefined;
    const listing = await listed.catch(() => undefined);
    const dir = wholeCheckoutDir(paths, commit);
    if (!listing || listing.kinds.get(path) !== 'tree' || !(await exists(dir))) return undefined;
    let set: SparseSet;
    try {
      set = await setFromListing(listing, path, async (file) => {
        const at = join(dir, file);
        if (!(await lstat(at)).isFile()) throw new Error(`${file} is not a regular file in the checkout`);
        return readFile(at, 'utf8');
      });
    } catch {
      return undefined;
    }
    if (!set.revision || set.paths.includes(WHOLE_TREE)) return undefined;
    return { dir, set, pathRevision: set.revision };
  }
}

function filesIn(listing: TreeListing): number {
  let files = 0;
  for (const kind of listing.kinds.values()) if (kind === 'blob') files++;
  return files;
}
