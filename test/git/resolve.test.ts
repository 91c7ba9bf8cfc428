import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reason } from '../../src/api/reasons.ts';
import { createGitFetcher } from '../../src/adapters/git/index.ts';
import type { GitFetcher, RefSpec } from '../../src/adapters/git/index.ts';
import { commitFiles, moveBranch, setHead, startGitFixture, tag } from '../support/git/index.ts';
import type { GitFixture, GitHttpServer, TestRepo } from '../support/git/index.ts';

describe('ref resolution against a real server', () => {
  let repos: GitFixture;
  let repo: TestRepo;
  let server: GitHttpServer;
  let fetcher: GitFetcher;
  const c: Record<string, string> = {};

  beforeAll(async () => {
    repos = await startGitFixture();
    repo = await repos.createRepo('apps');
    c.one = await commitFiles(repo, 'main', { 'a.yaml': '1' }, 'one');
    c.two = await commitFiles(repo, 'main', { 'a.yaml': '2' }, 'two');
    c.three = await commitFiles(repo, 'main', { 'a.yaml': '3' }, 'three');
    c.feature = await commitFiles(repo, 'feature/x', { 'f.yaml': 'f' }, 'feature');
    await tag(repo, 'v1.0.0', c.one);
    await tag(repo, 'v1.1.0', c.two, { annotated: true });
    await tag(repo, 'v1.2.0-rc.1', c.three);
    await tag(repo, '2.0.0', c.feature, { annotated: true });
    await tag(repo, 'nightly', c.three);
    server = await repos.serveHttp();
    fetcher = createGitFetcher({ cacheRoot: repos.cacheRoot, allowInsecureHttp: true, timeoutMs: 20_000 });
  });

  afterAll(async () => {
    await repos?.dispose();
  });

  const resolve = (ref: RefSpec | undefined) => fetcher.resolveRef(server.url('apps'), ref, undefined);

  it.each<[string, RefSpec | undefined, string, string | undefined]>([
    ['the remote HEAD', undefined, 'three', 'main'],
    ['a branch', { branch: 'main' }, 'three', 'main'],
    ['a branch with a slash', { branch: 'feature/x' }, 'feature', 'feature/x'],
    ['a lightweight tag', { tag: 'v1.0.0' }, 'one', 'v1.0.0'],
    ['an annotated tag (peeled)', { tag: 'v1.1.0' }, 'two', 'v1.1.0'],
    ['a non-semver tag', { tag: 'nightly' }, 'three', 'nightly'],
    ['a semver range (leading v, rc excluded)', { semver: '^1.0.0' }, 'two', 'v1.1.0'],
    ['a semver range reaching a pre-release', { semver: '>=1.2.0-rc.0 <2.0.0' }, 'three', 'v1.2.0-rc.1'],
    ['a semver range over an annotated tag without v', { semver: '2.x' }, 'feature', '2.0.0'],
    ['a star range', { semver: '*' }, 'feature', '2.0.0'],
  ])('%s', async (_what, ref, commitName, label) => {
    const commit = c[commitName] as string;
    expect(await resolve(ref)).toEqual({
      ok: true,
      value: { commit, refLabel: label, revision: `${label}@sha1:${commit}` },
    });
  });

  it('a pinned commit (not a branch tip) is fetched to prove it exists', async () => {
    const before = fetcher.stats().fetches;
    const r = await resolve({ commit: c.one as string });
    expect(r).toEqual({ ok: true, value: { commit: c.one, refLabel: undefined, revision: `sha1:${c.one}` } });
    expect(fetcher.stats().fetches).toBe(before + 1);
  });

  it.each<[string, RefSpec]>([
    ['a missing branch', { branch: 'nope' }],
    ['a missing tag', { tag: 'v9.9.9' }],
    ['a tag named like a branch', { tag: 'main' }],
    ['no tag in the semver range', { semver: '^3.0.0' }],
    ['an unknown commit', { commit: 'f'.repeat(40) }],
  ])('%s → RefNotFound', async (_what, ref) => {
    const r = await resolve(ref);
    expect(!r.ok && r.failure.reason).toBe(Reason.RefNotFound);
  });

  it('invalid refs never reach git', async () => {
    const before = fetcher.stats().lsRemotes;
    const r = await resolve({ branch: '--upload-pack=touch /tmp/x' });
    expect(!r.ok && r.failure.reason).toBe(Reason.InvalidRef);
    expect(fetcher.stats().lsRemotes).toBe(before);
  });

  it('follows a moved branch and a changed HEAD', async () => {
    await moveBranch(repo, 'main', c.two as string);
    expect(await resolve({ branch: 'main' })).toMatchObject({ ok: true, value: { commit: c.two } });
    await setHead(repo, 'feature/x');
    expect(await resolve(undefined)).toMatchObject({
      ok: true,
      value: { commit: c.feature, revision: `feature/x@sha1:${c.feature}` },
    });
    await setHead(repo, 'main');
    await moveBranch(repo, 'main', c.three as string);
  });

  it('a repository that does not exist → FetchFailed', async () => {
    const r = await fetcher.resolveRef(server.url('missing'), undefined, undefined);
    expect(!r.ok && r.failure.reason).toBe(Reason.FetchFailed);
  });

  it('an empty repository → RefNotFound for HEAD', async () => {
    await repos.createRepo('empty');
    const r = await fetcher.resolveRef(server.url('empty'), undefined, undefined);
    expect(!r.ok && r.failure.reason).toBe(Reason.RefNotFound);
  });
});

describe('resolves shared between PackageSyncs on one repository', () => {
  let repos: GitFixture;
  let repo: TestRepo;
  let server: GitHttpServer;

  beforeAll(async () => {
    repos = await startGitFixture();
    repo = await repos.createRepo('fleet');
    await commitFiles(repo, 'main', { 'a.yaml': '1' }, 'one');
    server = await repos.serveHttp();
  });

  afterAll(async () => {
    await repos?.dispose();
  });

  const advertisements = () => server.requests.filter((r) => r.path.includes('/info/refs')).length;
  const fetcherWith = (refCacheTtlMs: number) =>
    createGitFetcher({ cacheRoot: repos.cacheRoot, allowInsecureHttp: true, timeoutMs: 20_000, refCacheTtlMs });

  it('concurrent resolves of one URL and ref run one ls-remote', async () => {
    const fetcher = fetcherWith(0);
    const before = advertisements();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => fetcher.resolveRef(server.url('fleet'), { branch: 'main' }, undefined)),
    );
    expect(new Set(results.map((r) => r.ok && r.value.commit)).size).toBe(1);
    expect(fetcher.stats().lsRemotes).toBe(1);
    expect(advertisements() - before).toBe(1);
    // without a TTL, the next resolve asks again
    await fetcher.resolveRef(server.url('fleet'), { branch: 'main' }, undefined);
    expect(fetcher.stats().lsRemotes).toBe(2);
  });

  it('within the TTL a moved branch is seen only after forget(url); another ref or credential never shares', async () => {
    const fetcher = fetcherWith(60_000);
    const url = server.url('fleet');
    const first = await fetcher.resolveRef(url, { branch: 'main' }, undefined);
    const moved = await commitFiles(repo, 'main', { 'a.yaml': '2' }, 'two');
    const reused = await fetcher.resolveRef(url, { branch: 'main' }, undefined);
    expect(reused).toEqual(first);
    expect(fetcher.stats().lsRemotes).toBe(1);
    // a different ref is a different question; so is the same ref asked with credentials
    await fetcher.resolveRef(url, undefined, undefined);
    await fetcher.resolveRef(url, { branch: 'main' }, { username: 'u', password: 'p' });
    expect(fetcher.stats().lsRemotes).toBe(3);
    fetcher.forget(url);
    const fresh = await fetcher.resolveRef(url, { branch: 'main' }, undefined);
    expect(fresh.ok && fresh.value.commit).toBe(moved);
    expect(fetcher.stats().lsRemotes).toBe(4);
  });

  it('reconciles requested at once share one ls-remote started after the request; a later push is seen', async () => {
    const fetcher = fetcherWith(60_000);
    const url = server.url('fleet');
    await fetcher.resolveRef(url, { branch: 'main' }, undefined);
    const moved = await commitFiles(repo, 'main', { 'a.yaml': '3' }, 'three');
    // a fleet's resync, requested a moment ago: the first unit's forget outdates the resolve from before it
    const asked = Date.now() - 1;
    fetcher.forget(url, asked);
    const first = await fetcher.resolveRef(url, { branch: 'main' }, undefined);
    expect(first.ok && first.value.commit).toBe(moved);
    expect(fetcher.stats().lsRemotes).toBe(2);
    // the other units of the same request, reconciled after it: the resolve started since serves them all
    for (let i = 0; i < 5; i++) {
      fetcher.forget(url, asked);
      expect(await fetcher.resolveRef(url, { branch: 'main' }, undefined)).toEqual(first);
    }
    expect(fetcher.stats().lsRemotes).toBe(2);
    // a time in the future counts as now: a request cannot stop the sharing for later resolves
    fetcher.forget(url, Date.now() + 3_600_000);
    await fetcher.resolveRef(url, { branch: 'main' }, undefined);
    await fetcher.resolveRef(url, { branch: 'main' }, undefined);
    expect(fetcher.stats().lsRemotes).toBe(3);
    // a push after it (forget without a time: now) is asked for again
    const pushed = await commitFiles(repo, 'main', { 'a.yaml': '4' }, 'four');
    await new Promise((r) => setTimeout(r, 5));
    fetcher.forget(url);
    const after = await fetcher.resolveRef(url, { branch: 'main' }, undefined);
    expect(after.ok && after.value.commit).toBe(pushed);
    expect(fetcher.stats().lsRemotes).toBe(4);
  });

  it('a failed resolve is not reused', async () => {
    const fetcher = fetcherWith(60_000);
    const missing = server.url('no-such-repo');
    expect((await fetcher.resolveRef(missing, { branch: 'main' }, undefined)).ok).toBe(false);
    expect((await fetcher.resolveRef(missing, { branch: 'main' }, undefined)).ok).toBe(false);
    expect(fetcher.stats().lsRemotes).toBe(2);
  });

  it('a shared resolve cancelled by its first caller does not fail the others', async () => {
    const fetcher = fetcherWith(0);
    const cancel = new AbortController();
    const first = fetcher.resolveRef(server.url('fleet'), { branch: 'main' }, undefined, { signal: cancel.signal });
    const second = fetcher.resolveRef(server.url('fleet'), { branch: 'main' }, undefined);
    cancel.abort();
    expect((await first).ok).toBe(false);
    expect((await second).ok).toBe(true);
  });
});
