/**
 * The git cache stays inside its bound through 50 revisions of a real repository (smart HTTP), never removes
 * the checkout just handed out, and a revision evicted earlier is fetched again when asked for.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitFetcher } from '../../src/adapters/git/index.ts';
import { diskUsage } from '../../src/adapters/git/evict.ts';
import { commitFiles, startGitFixture, type GitFixture, type GitHttpServer } from '../support/git/index.ts';

const MAX_BYTES = 200_000;
let repos: GitFixture;
let server: GitHttpServer;

beforeAll(async () => {
  repos = await startGitFixture();
  server = await repos.serveHttp();
});

afterAll(async () => {
  await repos?.dispose();
});

describe('git cache eviction', () => {
  it('stays under its bound through 50 revisions, keeping the checkout in use', { timeout: 180_000 }, async () => {
    const repo = await repos.createRepo('big');
    // Eviction's clock moves one second a round and stands still within one: the checkout just handed out is
    // always "used now", the one before it a second old, however slow the machine is (it once failed under
    // load with a 150 ms real-time minimum idle).
    let now = Date.now();
    const fetcher = createGitFetcher({
      cacheRoot: repos.cacheRoot,
      allowInsecureHttp: true,
      eviction: { maxBytes: MAX_BYTES, maxIdleMs: 3_600_000, minIdleMs: 500 },
      clock: () => now,
    });
    const commits: string[] = [];
    const sizes: number[] = [];
    for (let i = 0; i < 50; i++) {
      // 16 KiB that does not compress: every revision costs the cache its full size
      const sha = await commitFiles(
        repo,
        'main',
        { 'blob.yaml': `data: ${randomBytes(12_288).toString('base64')}\n` },
        `r${i}`,
      );
      commits.push(sha);
      const checkout = await fetcher.fetchRevision(server.url('big'), sha, undefined);
      expect(checkout.ok).toBe(true);
      await fetcher.evict();
      // the checkout just handed out is in use: never removed
      expect(existsSync(join(checkout.ok ? checkout.value.dir : '', 'blob.yaml'))).toBe(true);
      sizes.push(await diskUsage(repos.cacheRoot));
      now += 1_000; // older than minIdle by the next round
    }
    // one revision is ~33 KiB on disk (checkout + objects): unbounded, 50 would be ~1.6 MiB
    expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_BYTES * 1.1);
    expect(fetcher.stats().evictions).toBeGreaterThan(40);

    // an evicted revision comes back: fetched again, not served from a half-removed cache
    const again = await fetcher.fetchRevision(server.url('big'), commits[0]!, undefined);
    expect(again.ok).toBe(true);
    expect(existsSync(join(again.ok ? again.value.dir : '', 'blob.yaml'))).toBe(true);
  });

  it('counts what a tree takes on disk, as du does, not the length of its files', async () => {
    // Found by the churn soak (bench/soak.ts): 500 sparse checkouts of one small package each held 0.6 MiB of
    // files in 7 MiB of disk; a bound on file lengths let the cache grow 10× past it on the emptyDir.
    const dir = mkdtempSync(join(tmpdir(), 'psync-du-'));
    try {
      for (let i = 0; i < 20; i++) {
        mkdirSync(join(dir, `c${i}`, 'pkg'), { recursive: true });
        writeFileSync(join(dir, `c${i}`, 'pkg', 'app.yaml'), 'a: 1\n');
      }
      const du = Number(execFileSync('du', ['-s', '-B1', dir], { encoding: 'utf8' }).split('\t')[0]);
      expect(await diskUsage(dir)).toBe(du);
      expect(await diskUsage(dir)).toBeGreaterThan(20 * 5);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
