import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reason } from '../../src/api/reasons.ts';
import { createGitFetcher, sweepStaleTemp } from '../../src/adapters/git/index.ts';
import { commitFiles, startGitFixture } from '../support/git/index.ts';
import type { GitFixture, GitHttpServer, TestRepo } from '../support/git/index.ts';

describe('the shared checkout cache', () => {
  let repos: GitFixture;
  let repo: TestRepo;
  let server: GitHttpServer;
  let authServer: GitHttpServer;
  let first: string;
  let second: string;

  beforeAll(async () => {
    repos = await startGitFixture();
    repo = await repos.createRepo('shared');
    first = await commitFiles(repo, 'main', { 'app/a.yaml': 'a: 1\n', 'app/run.sh': 'echo\n' }, 'first');
    second = await commitFiles(repo, 'main', { 'app/a.yaml': 'a: 2\n' }, 'second');
    server = await repos.serveHttp();
    authServer = await repos.serveHttp({ username: 'alice', password: 'alice-pw' });
  });

  afterAll(async () => {
    await repos?.dispose();
  });

  const fetcherAt = (root: string, timeoutMs = 20_000) =>
    createGitFetcher({ cacheRoot: root, allowInsecureHttp: true, timeoutMs });

  it('a second fetch of the same commit runs no git fetch and no request', async () => {
    const fetcher = fetcherAt(join(repos.cacheRoot, 'reuse'));
    const a = await fetcher.fetchRevision(server.url('shared'), first, undefined);
    expect(a.ok).toBe(true);
    const requests = server.requests.length;
    const b = await fetcher.fetchRevision(server.url('shared'), first, undefined);
    expect(b).toEqual(a);
    expect(fetcher.stats()).toMatchObject({ fetches: 1, checkouts: 1, cacheHits: 1 });
    expect(server.requests.length).toBe(requests);

    // A new commit is fetched (into the same cache repo) and gets its own checkout.
    const c = await fetcher.fetchRevision(server.url('shared'), second, undefined);
    expect(c.ok && c.value.dir).not.toBe(a.ok && a.value.dir);
    expect(fetcher.stats()).toMatchObject({ fetches: 2, checkouts: 2 });
  });

  it('a checkout idle past the eviction bound is looked for on disk again, and made again when gone', async () => {
    let now = 1_000_000;
    const root = join(repos.cacheRoot, 'idle');
    const fetcher = createGitFetcher({
      cacheRoot: root,
      allowInsecureHttp: true,
      eviction: { maxBytes: Number.MAX_SAFE_INTEGER, maxIdleMs: 60_000, minIdleMs: 60_000 },
      clock: () => now,
    });
    const a = await fetcher.fetchRevision(server.url('shared'), first, undefined);
    const dir = a.ok ? a.value.dir : '';
    // used a moment ago: eviction cannot have removed it, the memo answers
    now += 30_000;
    expect((await fetcher.fetchRevision(server.url('shared'), first, undefined)).ok).toBe(true);
    expect(fetcher.stats()).toMatchObject({ checkouts: 1, cacheHits: 1 });
    // idle past minIdleMs it may have been evicted: gone from disk, it is checked out again
    now += 61_000;
    await rm(dir, { recursive: true, force: true });
    const b = await fetcher.fetchRevision(server.url('shared'), first, undefined);
    expect(b.ok && (await readdir(b.value.dir))).toEqual(['app']);
    expect(fetcher.stats()).toMatchObject({ checkouts: 2 });
  });

  it('a restarted process reuses checkouts already on disk', async () => {
    const root = join(repos.cacheRoot, 'restart');
    await fetcherAt(root).fetchRevision(server.url('shared'), first, undefined);
    const again = fetcherAt(root);
    expect((await again.fetchRevision(server.url('shared'), first, undefined)).ok).toBe(true);
    expect(again.stats()).toMatchObject({ fetches: 0, cacheHits: 1 });
  });

  it('concurrent callers for one URL and commit share one fetch', async () => {
    const fetcher = fetcherAt(join(repos.cacheRoot, 'concurrent'));
    const results = await Promise.all(
      Array.from({ length: 8 }, () => fetcher.fetchRevision(server.url('shared'), first, undefined)),
    );
    expect(new Set(results.map((r) => r.ok && r.value.dir)).size).toBe(1);
    expect(fetcher.stats()).toMatchObject({ fetches: 1, checkouts: 1 });
    // Two different commits at once: fetches into the same cache repo are serialised and both succeed.
    const pair = fetcherAt(join(repos.cacheRoot, 'pair'));
    const both = await Promise.all([first, second].map((c) => pair.fetchRevision(server.url('shared'), c, undefined)));
    expect(both.every((r) => r.ok)).toBe(true);
    expect(pair.stats()).toMatchObject({ fetches: 2, checkouts: 2 });
  });

  it('checkouts are read-only and hold no .git', async () => {
    const r = await fetcherAt(join(repos.cacheRoot, 'ro')).fetchRevision(server.url('shared'), first, undefined);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect((await stat(r.value.dir)).mode & 0o222).toBe(0);
    expect((await stat(join(r.value.dir, 'app'))).mode & 0o222).toBe(0);
    expect((await stat(join(r.value.dir, 'app', 'a.yaml'))).mode & 0o222).toBe(0);
    expect(await readdir(r.value.dir)).toEqual(['app']);
  });

  it('other credentials never get a checkout someone else fetched', async () => {
    const fetcher = fetcherAt(join(repos.cacheRoot, 'tenants'));
    const alice = await fetcher.fetchRevision(authServer.url('shared'), first, {
      username: 'alice',
      password: 'alice-pw',
    });
    expect(alice.ok).toBe(true);
    const mallory = await fetcher.fetchRevision(authServer.url('shared'), first, {
      username: 'alice',
      password: 'guess',
    });
    expect(!mallory.ok && mallory.failure.reason).toBe(Reason.AuthenticationFailed);
    const anonymous = await fetcher.fetchRevision(authServer.url('shared'), first, undefined);
    expect(!anonymous.ok && anonymous.failure.reason).toBe(Reason.AuthenticationFailed);
  });

  it('leaves no per-operation material behind', async () => {
    const root = join(repos.cacheRoot, 'clean');
    const fetcher = fetcherAt(root);
    await fetcher.fetchRevision(authServer.url('shared'), first, { username: 'alice', password: 'alice-pw' });
    await fetcher.resolveRef(authServer.url('shared'), undefined, { username: 'alice', password: 'wrong' });
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });

  it('a server that never answers → SourceTimeout within the deadline', async () => {
    const sockets = new Set<Socket>();
    const blackhole: Server = createServer((s) => sockets.add(s));
    await new Promise<void>((r) => blackhole.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(blackhole.address() as AddressInfo).port}/never.git`;
    try {
      const fetcher = fetcherAt(join(repos.cacheRoot, 'timeout'), 800);
      const started = Date.now();
      const resolved = await fetcher.resolveRef(url, undefined, undefined);
      const fetched = await fetcher.fetchRevision(url, first, undefined);
      expect(!resolved.ok && resolved.failure.reason).toBe(Reason.SourceTimeout);
      expect(!fetched.ok && fetched.failure.reason).toBe(Reason.SourceTimeout);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => blackhole.close(() => r()));
    }
  });

  it("the caller's own deadline (the reconcile's spec.timeout) → SourceTimeout too; a cancel → FetchFailed", async () => {
    const sockets = new Set<Socket>();
    const blackhole: Server = createServer((s) => sockets.add(s));
    await new Promise<void>((r) => blackhole.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(blackhole.address() as AddressInfo).port}/never.git`;
    try {
      const fetcher = fetcherAt(join(repos.cacheRoot, 'caller-timeout'), 60_000);
      const started = Date.now();
      const late = await fetcher.resolveRef(url, undefined, undefined, { signal: AbortSignal.timeout(800) });
      expect(late).toMatchObject({ ok: false, failure: { reason: Reason.SourceTimeout } });
      expect(!late.ok && late.failure.message).toContain('spec.timeout');
      const cancel = new AbortController();
      setTimeout(() => cancel.abort(), 300);
      const cancelled = await fetcher.fetchRevision(url, first, undefined, { signal: cancel.signal });
      expect(cancelled).toMatchObject({ ok: false, failure: { reason: Reason.FetchFailed } });
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => blackhole.close(() => r()));
    }
  });

  it('sweepStaleTemp removes crash leftovers and keeps finished checkouts', async () => {
    const root = join(repos.cacheRoot, 'sweep');
    const fetcher = fetcherAt(root);
    const done = await fetcher.fetchRevision(server.url('shared'), first, undefined);
    expect(done.ok).toBe(true);
    if (!done.ok) return;
    const base = join(done.value.dir, '..', '..');
    const staleOp = join(root, 'tmp', 'op-abc123');
    const staleCheckout = join(base, 'checkouts', `.staging-${second}-0a0b`);
    await mkdir(join(staleOp, 'home'), { recursive: true });
    await writeFile(join(staleOp, 'password'), 'left-behind', { mode: 0o600 });
    await mkdir(join(staleCheckout, 'sub'), { recursive: true, mode: 0o555 });
    await writeFile(join(base, 'repo', 'shallow.lock'), '');

    const removed = await sweepStaleTemp(root);
    expect(removed.sort()).toEqual([staleOp, staleCheckout, join(base, 'repo', 'shallow.lock')].sort());
    expect((await stat(done.value.dir)).isDirectory()).toBe(true);
    // The cache still works after the sweep (the lock is gone).
    expect((await fetcherAt(root).fetchRevision(server.url('shared'), second, undefined)).ok).toBe(true);
  });
});
