/**
 * Monorepos: fetch only what a package reads. The cache repo holds partial fetches (`--filter=blob:none`,
 * depth 1: the commit and its trees, no file contents); the package's sparse set is worked out from the trees
 * and the kustomization files it reaches; the blobs of that set alone are fetched by id, in one batch, and a
 * sparse checkout (git's own, non-cone patterns) writes them. docs/adr/0026-remote-clusters-and-monorepo-checkouts.md.
 *
 * The sparse set starts at spec.path and widens, iteratively, to every directory or file a kustomization in
 * the set names (resources, components, bases, patches, generators' files…, kustomize-refs.ts), as long as
 * the references stay inside the repository. It falls back to the whole tree (".") when they do not, when a
 * kustomization cannot be read, or for a Helm chart (its valuesFiles are relative to the repository root and
 * are not known here): the render then sees exactly what a full checkout gives it.
 *
 * The package's revision for the no-op decision is a digest of the object ids (`git rev-parse COMMIT:path`)
 * of the sparse set: a commit that touches nothing in it leaves it unchanged.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { ok, type Result } from '../../core/failure.ts';
import { fetchCommit, stageCheckout, type CachePaths } from './cache.ts';
import type { GitOperation } from './git-command.ts';
import { isRemote, KUSTOMIZATION_FILES, kustomizationRefs } from './kustomize-refs.ts';

/** The whole tree. */
export const WHOLE_TREE = '.';

/** How many kustomizations one sparse set may read before giving up and taking the whole tree. */
const MAX_KUSTOMIZATIONS = 200;

/**
 * A fetch with --filter makes git record the URL as a promisor remote in the repo's config, after which any
 * command that meets a missing object fetches it by itself — `cat-file -e` of an absent commit then downloads
 * that commit's whole history of commits and trees (git 2.39). The cache repo fetches what it needs explicitly
 * (fetchBlobs), so the record is removed after every filtered fetch: nothing here reaches the network unasked.
 */
export async function forgetPromisor(repo: string): Promise<void> {
  const file = join(repo, 'config');
  const text = await readFile(file, 'utf8');
  const kept: string[] = [];
  let inRemote = false;
  for (const line of text.split('\n')) {
    if (/^\s*\[/.test(line)) inRemote = /^\s*\[remote\s/.test(line);
    if (!inRemote) kept.push(line);
  }
  const next = kept.join('\n');
  if (next !== text) await writeFile(file, next);
}

/** Blob ids per `git fetch`: well inside any argument-length limit. */
const BLOBS_PER_FETCH = 2000;

/**
 * Fetches these blobs by id (those not in the cache repo yet), as partial clone's on-demand fetch does, but
 * explicitly: the cache repo is not a promisor (forgetPromisor), so no other git command ever goes to the
 * network by itself. The URL follows "--", as in every fetch here.
 */
export async function fetchBlobs(op: GitOperation, repo: string, url: string, oids: readonly string[]): Promise<void> {
  const git = op.git(repo, { GIT_DIR: repo });
  const unique = [...new Set(oids)];
  // git asks only for the ids it does not have, and does not connect at all when it has them all
  for (let i = 0; i < unique.length; i += BLOBS_PER_FETCH) {
    const chunk = unique.slice(i, i + BLOBS_PER_FETCH);
    await git.raw([
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--no-recurse-submodules',
      '--',
      url,
      ...chunk,
    ]);
  }
}

/** What a package reads: paths relative to the repository root, and which of them are directories. */
export interface SparseSet {
  /** Sorted; none inside another; [WHOLE_TREE] for everything. */
  paths: string[];
  dirs: ReadonlySet<string>;
  /** The blobs under `paths`, when known from the listing (saves a listing at checkout). */
  blobs?: string[];
  /** The path revision, when known from the listing (saves a rev-parse). */
  revision?: string;
}

export const whole = (): SparseSet => ({ paths: [WHOLE_TREE], dirs: new Set([WHOLE_TREE]) });

/** A commit's whole tree as `ls-tree -r -t` lists it: each path's kind and object id. */
export interface TreeListing {
  kinds: Map<string, 'tree' | 'blob'>;
  ids: Map<string, string>;
}

/** One listing of the commit's whole tree (its trees only are needed: a partial fetch has them). */
export async function listTree(op: GitOperation, repo: string, commit: string): Promise<TreeListing> {
  const listing = await op.git(repo, { GIT_DIR: repo }).raw(['ls-tree', '-r', '-t', '-z', '--full-tree', commit]);
  const kinds = new Map<string, 'tree' | 'blob'>();
  const ids = new Map<string, string>();
  for (const entry of listing.split('\0')) {
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const [, type, oid] = entry.slice(0, tab).split(' ');
    if ((type === 'tree' || type === 'blob') && oid) {
      kinds.set(entry.slice(tab + 1), type);
      ids.set(entry.slice(tab + 1), oid);
    }
  }
  return { kinds, ids };
}

/** A set of paths as the listing tells it: which are directories, its blobs, and its revision (pathRevision's digest). */
export function setOf({ kinds, ids }: TreeListing, paths: string[]): SparseSet {
  const dirs = new Set(paths.filter((p) => kinds.get(p) === 'tree'));
  const inSet = (p: string) => paths.some((s) => p === s || p.startsWith(`${s}/`));
  const revision = paths.every((p) => ids.has(p))
    ? digest(
        paths,
        paths.map((p) => ids.get(p)!),
      )
    : undefined;
  let blobs: string[] | undefined;
  return {
    paths,
    dirs,
    // a walk of the whole listing: only a sparse checkout needs it, not a package served from the whole tree
    get blobs() {
      blobs ??= [...kinds].filter(([p, k]) => k === 'blob' && inSet(p)).map(([p]) => ids.get(p)!);
      return blobs;
    },
    ...(revision ? { revision } : {}),
  };
}

/** Reads the text of one kustomization file of the listing, by its path in the repository. */
export type KustomizationReader = (file: string) => Promise<string>;

/** The paths (directories or files, relative to the repository root) a package at `path` reads at `commit`. */
export async function sparseSet(
  op: GitOperation,
  repo: string,
  url: string,
  commit: string,
  path: string,
  /** The commit's listing when the caller has it already (source.ts keeps the last few: one per commit). */
  listed?: TreeListing,
): Promise<SparseSet> {
  if (path === WHOLE_TREE) return whole();
  const git = op.git(repo, { GIT_DIR: repo });
  const listing = listed ?? (await listTree(op, repo, commit));
  return setFromListing(listing, path, async (file) => {
    const id = listing.ids.get(file)!;
    await fetchBlobs(op, repo, url, [id]);
    return git.raw(['cat-file', 'blob', id]);
  });
}

/**
 * The sparse set of the package at `path`, from the commit's listing and the kustomization files it reaches, read
 * with `read`: from the cache repo (sparseSet, under the repo's lock), or from the commit's whole checkout when a
 * fleet's packages are served from it (whole-checkouts.ts: no git, no lock). The same walk either way.
 */
export async function setFromListing(
  listing: TreeListing,
  path: string,
  read: KustomizationReader,
): Promise<SparseSet> {
  const { kinds } = listing;
  if (path === WHOLE_TREE) return whole();
  const known = (paths: string[]) => setOf(listing, paths);
  // not a directory: the first part of the path that is not one (a symbolic link, a file), or the path if none
  // is; read-package then reports it as before (PathEscape for a link out, PathNotFound)
  if (kinds.get(path) !== 'tree') {
    const parts = path.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    return known([prefixes.find((p) => kinds.get(p) === 'blob') ?? path]);
  }
  if (kinds.get(`${path}/Chart.yaml`) === 'blob') return whole();

  const set = new Set<string>([path]);
  const covered = (p: string) => [...set].some((s) => p === s || p.startsWith(`${s}/`));
  const visited = new Set<string>();
  const pending = [path];
  while (pending.length > 0) {
    const dir = pending.shift()!;
    if (visited.has(dir)) continue;
    visited.add(dir);
    if (visited.size > MAX_KUSTOMIZATIONS) return whole();
    const file = KUSTOMIZATION_FILES.map((f) => `${dir}/${f}`).find((f) => kinds.get(f) === 'blob');
    if (!file) continue; // a plain directory: its subtree is in the set already
    const refs = kustomizationRefs(await read(file));
    if ('unreadable' in refs) return whole();
    for (const ref of refs.refs) {
      if (isRemote(ref) || posix.isAbsolute(ref)) continue; // refused by the render, with its own message
      const target = posix.normalize(posix.join(dir, ref)).replace(/\/+$/, '');
      if (target === '..' || target.startsWith('../')) return whole(); // outside the repository
      if (target === '.' || target === '') return whole();
      const kind = kinds.get(target);
      if (kind === undefined) continue; // missing: kustomize says so
      if (!covered(target)) set.add(target);
      if (kind === 'tree') pending.push(target);
    }
  }
  // drop entries inside others
  return known([...set].filter((p) => ![...set].some((s) => s !== p && p.startsWith(`${s}/`))).sort());
}

/** The checkout directory's name: the commit for the whole tree, the commit and a digest of the set otherwise. */
export function checkoutName(commit: string, set: readonly string[]): string {
  if (set.length === 1 && set[0] === WHOLE_TREE) return commit;
  return `${commit}-${createHash('sha256').update(set.join('\n')).digest('hex').slice(0, 16)}`;
}

/**
 * A digest of the object ids of the set's paths at `commit` (`sha256:<hex>`); undefined when one of them does
 * not exist there or the commit's trees are not in the cache repo.
 */
export async function pathRevision(
  op: GitOperation,
  repo: string,
  commit: string,
  set: readonly string[],
): Promise<string | undefined> {
  const specs = set.map((p) => (p === WHOLE_TREE ? `${commit}^{tree}` : `${commit}:${p}`));
  let out: string;
  try {
    out = await op.git(repo, { GIT_DIR: repo }).raw(['rev-parse', ...specs]);
  } catch {
    return undefined;
  }
  const ids = out.trim().split('\n');
  if (ids.length !== set.length || ids.some((id) => !/^[0-9a-f]{40,64}$/.test(id))) return undefined;
  return digest(set, ids);
}

function digest(paths: readonly string[], ids: readonly string[]): string {
  const lines = paths.map((p, i) => `${ids[i]} ${p}\n`).join('');
  return `sha256:${createHash('sha256').update(lines).digest('hex')}`;
}

async function blobsUnder(op: GitOperation, repo: string, commit: string, paths: string[]): Promise<string[]> {
  const listed = await op.git(repo, { GIT_DIR: repo }).raw(['ls-tree', '-r', '-z', commit, '--', ...paths]);
  return listed
    .split('\0')
    .map((e) => e.slice(0, e.indexOf('\t')).split(' '))
    .filter(([, type, oid]) => type === 'blob' && oid)
    .map(([, , oid]) => oid!);
}

/** Escapes a path for a non-cone sparse-checkout pattern, anchored at the root. */
function pattern(path: string, dir: boolean): string {
  const escaped = path.replace(/[\\*?[\]]/g, (c) => `\\${c}`).replace(/^([!#])/, '\\$1');
  return `/${escaped}${dir ? '/' : ''}`;
}

/**
 * Writes the set's files of `commit` into `<checkouts>/<name>`, read-only, with git's sparse checkout, after
 * fetching the set's blobs in one batch. The pattern file is the cache repo's (info/sparse-checkout): callers
 * hold the repo's lock (source.ts serialises per repo).
 */
export async function sparseCheckoutCommit(
  op: GitOperation,
  paths: CachePaths,
  url: string,
  commit: string,
  set: SparseSet,
  /** True when this operation fetched the commit whole (no filter): every blob is there already. */
  fetchedWhole: boolean,
): Promise<Result<string>> {
  return stageCheckout(op, paths, commit, checkoutName(commit, set.paths), async (staging) => {
    if (set.paths[0] !== WHOLE_TREE) {
      await fetchBlobs(op, paths.repo, url, set.blobs ?? (await blobsUnder(op, paths.repo, commit, set.paths)));
    } else if (!fetchedWhole) {
      // the whole tree of a commit fetched partially (a fallback, or another package's fetch came first): one
      // pack of everything, as a shallow clone gets it, is far cheaper than thousands of blobs by id
      const refetched = await fetchCommit(op, paths.repo, url, commit, ['--refetch']);
      if (!refetched.ok) return refetched;
    }
    const patterns = set.paths[0] === WHOLE_TREE ? ['/*'] : set.paths.map((p) => pattern(p, set.dirs.has(p)));
    await mkdir(join(paths.repo, 'info'), { recursive: true });
    await writeFile(join(paths.repo, 'info', 'sparse-checkout'), `${patterns.join('\n')}\n`);
    const env = { GIT_DIR: paths.repo, GIT_WORK_TREE: staging, GIT_INDEX_FILE: join(op.dir, 'index') };
    await op.git(staging, env).raw(['-c', 'core.sparseCheckout=true', 'read-tree', '--reset', '-u', commit]);
    return ok(undefined);
  });
}
