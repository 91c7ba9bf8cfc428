/**
 * Keeps the git cache inside its bounds (evict.ts chooses what goes): remembers when this process last used
 * each checkout and cache repo, and after a new checkout runs an eviction in the background, at most once per
 * EVICTION_EVERY_MS, removing one path at a time with the fetches into the same cache repo.
 */
import { removeTree } from './cache.ts';
import { chooseEvictions, listCache, type EvictionPolicy } from './evict.ts';
import type { RepoLocks } from './repo-locks.ts';

/** Eviction walks the whole cache: after a new checkout, not more often than this. */
const EVICTION_EVERY_MS = 30_000;

export interface CacheEvictionOptions {
  cacheRoot: string;
  /** Bounds of the cache on disk; undefined: unbounded, nothing is evicted. */
  eviction?: EvictionPolicy | undefined;
  onEvicted?: ((removed: { paths: number; bytes: number }) => void) | undefined;
  clock: () => number;
}

export class CacheEviction {
  /** When this process last used each checkout and cache repo (evict.ts reads it). */
  private readonly used = new Map<string, number>();
  private evicting: Promise<void> | undefined;
  private lastEviction = 0;
  private readonly options: CacheEvictionOptions;
  private readonly locks: RepoLocks;
  private readonly counters: { evictions: number };

  constructor(options: CacheEvictionOptions, locks: RepoLocks, counters: { evictions: number }) {
    this.options = options;
    this.locks = locks;
    this.counters = counters;
  }

  touch(...paths: string[]): void {
    const now = this.options.clock();
    for (const p of paths) this.used.set(p, now);
  }

  /**
   * Whether a checkout this process used is certainly still on disk, without asking the file system: only this
   * process evicts (one fetcher per cache root), and never a checkout used within the policy's minIdleMs (evict.ts;
   * a cache repo may go sooner, its checkouts do not go with it). A settled fleet's checks then cost no lstat each
   * (issue 18: idle CPU).
   */
  surelyPresent(dir: string): boolean {
    const last = this.used.get(dir);
    if (last === undefined) return false;
    const { eviction, clock } = this.options;
    return !eviction || clock() - last < eviction.minIdleMs;
  }

  /** After a new checkout, at most once per EVICTION_EVERY_MS, in the background. */
  schedule(): void {
    const { eviction, clock } = this.options;
    if (!eviction || this.evicting || clock() - this.lastEviction < EVICTION_EVERY_MS) return;
    void this.evict();
  }

  evict(): Promise<void> {
    const { eviction: policy, clock, cacheRoot, onEvicted } = this.options;
    if (!policy) return Promise.resolve();
    this.evicting ??= (async () => {
      this.lastEviction = clock();
      const chosen = chooseEvictions(await listCache(cacheRoot, this.used), policy, clock());
      let bytes = 0;
      for (const entry of chosen) {
        // one at a time with the fetches into the same cache repo; a checkout still unused when its turn comes
        await this.locks.serialised(entry.base, async () => {
          if (entry.kind === 'checkout' && clock() - (this.used.get(entry.path) ?? 0) < policy.minIdleMs) return;
          await removeTree(entry.path);
          this.used.delete(entry.path);
          this.counters.evictions++;
          bytes += entry.bytes;
        });
      }
      if (chosen.length > 0) onEvicted?.({ paths: chosen.length, bytes });
    })()
      .catch(() => undefined) // a cache that cannot be cleaned now is tried again after the next checkout
      .finally(() => (this.evicting = undefined));
    return this.evicting;
  }
}
