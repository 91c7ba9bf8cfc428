import { createHash, randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import type { GitOperation } from './git-command.ts';

/**
 * The on-disk cache every PackageSync with the same URL and the same credentials shares:
 *   <cacheRoot>/<key>/repo                  bare repo holding shallow (depth 1) fetches
 *   <cacheRoot>/<key>/checkouts/<commit>    read-only tree of one commit
 *   <cacheRoot>/<key>/url                   the URL, for humans
 * <key> hashes the URL and a fingerprint of the credentials: a PackageSync whose secret cannot read a private
 * repository must not be handed another tenant's checkout of it from the cache.
 * Checkouts are built in `.staging-*` siblings and renamed into place, so a checkout directory that exists is
 * complete; a crash leaves only `.staging-*` leftovers, which sweepStaleTemp removes.
 */

export const STAGING_PREFIX = '.staging-';

export function cacheKey(url: string, credential: string): string {
  return createHash('sha256').update(`${url}\n${credential}`).digest('hex').slice(0, 32);
}

export interface CachePaths {
  base: string;
  repo: string;
  checkouts: string;
}

export function cachePaths(cacheRoot: string, url: string, credential: string): CachePaths {
  const base = join(cacheRoot, cacheKey(url, credential));
  return { base, repo: join(base, 'repo'), checkouts: join(base, 'checkouts') };
}

export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Creates the bare cache repo if missing: initialised in a staging dir, then renamed, so it is never half-made. */
export async function ensureCacheRepo(op: GitOperation, paths: CachePaths, url: string): Promise<void> {
  if (await exists(join(paths.repo, 'HEAD'))) return;
  await mkdir(paths.checkouts, { recursive: true });
  const staging = join(paths.base, `${STAGING_PREFIX}repo-${randomBytes(6).toString('hex')}`);
  await op.git(paths.base).raw(['init', '--bare', '--quiet', staging]);
  try {
    await rename(staging, paths.repo);
  } catch (err) {
    // Another fetcher on the same cache root won the race: use its repo, never remove it.
    await rm(staging, { recursive: true, force: true });
    if (!(await exists(join(paths.repo, 'HEAD')))) throw err;
  }
  await writeFile(join(paths.base, 'url'), `${url}\n`);
}

export async function hasCommit(op: GitOperation, repo: string, commit: string): Promise<boolean> {
  try {
    await op.git(repo, { GIT_DIR: repo }).raw(['cat-file', '-e', `${commit}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Shallow-fetches one commit by id. No refs, no tags, no FETCH_HEAD are written: the cache is only an object
 * store; the commit id is the key. Servers speaking protocol v2 (and GitHub, GitLab) serve any reachable commit.
 */
export async function fetchCommit(
  op: GitOperation,
  repo: string,
  url: string,
  commit: string,
  /** e.g. ['--filter=blob:none'] for a partial fetch (sparse-checkout.ts); written by this module, never the spec. */
  extra: readonly string[] = [],
): Promise<Result<void>> {
  try {
    await op
      .git(repo, { GIT_DIR: repo })
      .raw([
        'fetch',
        '--quiet',
        '--depth=1',
        ...extra,
        '--no-tags',
        '--no-write-fetch-head',
        '--no-recurse-submodules',
        '--',
        url,
        commit,
      ]);
  } catch (err) {
    const failure = op.failure(err, `fetching commit ${commit} from`);
    if (failure.reason === Reason.RefNotFound) {
      return fail(Reason.RefNotFound, `commit ${commit} not found in ${url} (no branch or tag reaches it)`);
    }
    return { ok: false, failure };
  }
  if (!(await hasCommit(op, repo, commit))) {
    return fail(Reason.RefNotFound, `commit ${commit} not found in ${url}`);
  }
  return ok(undefined);
}

/**
 * Writes the tree of `commit` into `<checkouts>/<commit>` and makes it read-only. Uses a private index file
 * and an explicit work tree, so the cache repo itself is never modified and has no work tree of its own.
 */
export async function checkoutCommit(op: GitOperation, paths: CachePaths, commit: string): Promise<Result<string>> {
  return stageCheckout(op, paths, commit, commit, async (staging) => {
    const env = { GIT_DIR: paths.repo, GIT_WORK_TREE: staging, GIT_INDEX_FILE: join(op.dir, 'index') };
    await op.git(staging, env).raw(['read-tree', '--reset', '-u', commit]);
    return ok(undefined);
  });
}

/**
 * A checkout written into a private staging directory by `fill`, made read-only and renamed into place as
 * `checkouts/<name>` in one step, so a reader never sees half a tree. When two operations race for the same
 * checkout, the one that loses finds the winner's in place and uses it.
 */
export async function stageCheckout(
  op: GitOperation,
  paths: CachePaths,
  commit: string,
  name: string,
  fill: (staging: string) => Promise<Result<void>>,
): Promise<Result<string>> {
  const target = join(paths.checkouts, name);
  const staging = join(paths.checkouts, `${STAGING_PREFIX}${commit}-${randomBytes(6).toString('hex')}`);
  await mkdir(staging, { recursive: true });
  try {
    const filled = await fill(staging);
    if (!filled.ok) {
      await removeTree(staging);
      return filled;
    }
    await makeReadOnly(staging);
    await rename(staging, target);
    return ok(target);
  } catch (err) {
    await removeTree(staging);
    if (await exists(target)) return ok(target); // someone else finished the same checkout first
    return { ok: false, failure: op.failure(err, `checking out commit ${commit} of`) };
  }
}

/** Files keep their execute bits but lose write bits; directories become r-x. Symlinks are left as they are. */
export async function makeReadOnly(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await makeReadOnly(path);
    else if (entry.isFile()) await chmod(path, (await stat(path)).mode & 0o555);
  }
  await chmod(dir, 0o555);
}

/** rm -rf that also works on our read-only trees when not running as root. */
export async function removeTree(dir: string): Promise<void> {
  await makeWritable(dir).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
}

async function makeWritable(dir: string): Promise<void> {
  const info = await lstat(dir);
  if (!info.isDirectory()) return;
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await makeWritable(join(dir, entry.name));
  }
}
