import { describe, expect, it } from 'vitest';
import { chooseEvictions, type CacheEntry } from './evict.ts';

const NOW = 1_000_000;
const checkout = (name: string, bytes: number, idleMs: number, base = 'a'): CacheEntry => ({
  path: `${base}/checkouts/${name}`,
  base,
  kind: 'checkout',
  bytes,
  lastUsed: NOW - idleMs,
});
const repo = (bytes: number, idleMs: number, base = 'a'): CacheEntry => ({
  path: `${base}/repo`,
  base,
  kind: 'repo',
  bytes,
  lastUsed: NOW - idleMs,
});
const policy = { maxBytes: 100, maxIdleMs: 10_000, minIdleMs: 1_000 };
const paths = (es: CacheEntry[]) => es.map((e) => e.path);

describe('chooseEvictions', () => {
  it('keeps everything inside the bounds', () => {
    expect(chooseEvictions([checkout('c1', 40, 5_000), repo(50, 5_000)], policy, NOW)).toEqual([]);
  });

  it('removes what nobody used for maxIdle, whatever the size', () => {
    const old = checkout('old', 1, 20_000, 'b');
    const oldRepo = repo(1, 20_000, 'b');
    expect(paths(chooseEvictions([old, oldRepo, checkout('new', 1, 0)], policy, NOW))).toEqual([
      'b/checkouts/old',
      'b/repo',
    ]);
  });

  it('over the size: least recently used checkouts first, then cache repos', () => {
    const entries = [checkout('c1', 40, 3_000), checkout('c2', 40, 5_000), checkout('c3', 40, 4_000), repo(30, 2_000)];
    expect(paths(chooseEvictions(entries, policy, NOW))).toEqual(['a/checkouts/c2', 'a/checkouts/c3']);
    const big = [checkout('c1', 60, 3_000), repo(90, 0)];
    expect(paths(chooseEvictions(big, policy, NOW))).toEqual(['a/checkouts/c1']);
    const stillBig = [checkout('c1', 60, 0), repo(90, 0)];
    // the checkout may be in use (used a moment ago): only the object store can go
    expect(paths(chooseEvictions(stillBig, policy, NOW))).toEqual(['a/repo']);
  });

  it('never removes a checkout used within minIdle, even far over the size', () => {
    const entries = [checkout('c1', 500, 10), checkout('c2', 500, 900)];
    expect(chooseEvictions(entries, policy, NOW)).toEqual([]);
  });
});
