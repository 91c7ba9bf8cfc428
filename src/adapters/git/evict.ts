import { lstat, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { STAGING_PREFIX } from './cache.ts';

/**
 * Keeps the git cache inside its bounds (a Pod's emptyDir has a size limit; past it the kubelet evicts the
 * Pod). A cache repo is an object store that only makes the next fetch cheaper; checkouts are separate
 * read-only trees. Two rules, in this order:
 * - age: a checkout, or a cache repo, nobody used for `maxIdleMs` goes;
 * - size: while the cache is larger than `maxBytes`, the least recently used checkout goes, then the least
 *   recently used cache repo's object store (its next fetch starts from nothing; fetches into a repo hold its
 *   lock, so one is never removed mid-fetch).
 * No checkout used in the last `minIdleMs` is ever removed: a reconcile reads its checkout (the package
 * files, a kustomize build) within moments of the fetch, so a checkout in use is always a recently used one.
 * When only such checkouts are left the cache may stay above its bound until they age.
 */
export interface EvictionPolicy {
  maxBytes: number;
  maxIdleMs: number;
  minIdleMs: number;
}

export interface CacheEntry {
  /** A checkout directory, or a cache repo's object store (`<base>/repo`). */
  path: string;
  /** The cache repo's base directory: removals are serialised per base with fetches into it. */
  base: string;
  kind: 'checkout' | 'repo';
  bytes: number;
  lastUsed: number;
}

/** What to remove, decided on the entries found: pure, so the rules are tested on plain data. */
export function chooseEvictions(entries: readonly CacheEntry[], policy: EvictionPolicy, now: number): CacheEntry[] {
  const idle = (e: CacheEntry) => now - e.lastUsed;
  const chosen = entries.filter(
    (e) => idle(e) >= policy.maxIdleMs && (e.kind === 'repo' || idle(e) >= policy.minIdleMs),
  );
  let total = entries.filter((e) => !chosen.includes(e)).reduce((sum, e) => sum + e.bytes, 0);
  const lru = (kind: CacheEntry['kind']) =>
    entries
      .filter((e) => e.kind === kind && !chosen.includes(e) && (kind === 'repo' || idle(e) >= policy.minIdleMs))
      .sort((a, b) => a.lastUsed - b.lastUsed);
  for (const e of [...lru('checkout'), ...lru('repo')]) {
    if (total <= policy.maxBytes) break;
    chosen.push(e);
    total -= e.bytes;
  }
  return chosen;
}

/**
 * Every checkout and cache repo under the cache root, with its size and last use: from this process where it
 * knows (`used`, by path), else the directory's mtime (a restart forgets use times; a checkout's mtime is
 * when it was made).
 */
export async function listCache(root: string, used: ReadonlyMap<string, number>): Promise<CacheEntry[]> {
  const entries: CacheEntry[] = [];
  for (const key of await names(root)) {
    if (!/^[0-9a-f]{32}$/.test(key)) continue;
    const base = join(root, key);
    const checkouts = join(base, 'checkouts');
    for (const commit of await names(checkouts)) {
      if (commit.startsWith(STAGING_PREFIX)) continue;
      const path = join(checkouts, commit);
      const lastUsed = used.get(path) ?? (await mtime(path));
      entries.push({ path, base, kind: 'checkout', bytes: await diskUsage(path), lastUsed });
    }
    const repo = join(base, 'repo');
    if (await exists(repo)) {
      const lastUsed = used.get(repo) ?? (await mtime(repo));
      entries.push({ path: repo, base, kind: 'repo', bytes: await diskUsage(repo), lastUsed });
    }
  }
  return entries;
}

async function exists(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined)) !== undefined;
}

async function names(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

async function mtime(path: string): Promise<number> {
  return (await stat(path).catch(() => undefined))?.mtimeMs ?? 0;
}

/**
 * Bytes `path` takes on disk, as du counts them (allocated blocks of files and directories; symlinks counted
 * as links, never followed). Not the files' lengths: a sparse checkout of a small package is a few hundred
 * bytes of files in several directories, 10× that on disk, and an emptyDir's size limit counts the disk.
 */
export async function diskUsage(path: string): Promise<number> {
  const info = await lstat(path).catch(() => undefined);
  if (!info) return 0;
  if (!info.isDirectory()) return info.blocks * 512;
  let total = info.blocks * 512;
  for (const entry of await names(path)) total += await diskUsage(join(path, entry));
  return total;
}
