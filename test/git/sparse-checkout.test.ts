/**
 * Monorepos against a real git server: a package's checkout holds its path and the kustomize bases it reaches,
 * nothing else is fetched, and its path revision changes only with what it reads.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitFetcher, createGitSource } from '../../src/adapters/git/index.ts';
import type { FetchedSource } from '../../src/adapters/git/source-port.ts';
import { commitFiles, startGitFixture } from '../support/git/index.ts';
import type { FileChange, GitFixture, GitHttpServer, TestRepo } from '../support/git/index.ts';

const BIG = 'x'.repeat(2 << 20); // 2 MiB that no package reads

/** Every file under dir, relative, sorted. */
async function tree(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await tree(dir, rel)));
    else out.push(rel);
  }
  return out.sort();
}

describe('sparse checkout of a monorepo package', () => {
  let repos: GitFixture;
  let server: GitHttpServer;
  let repo: TestRepo;
  const signal = () => AbortSignal.timeout(30_000);

  beforeAll(async () => {
    repos = await startGitFixture();
    repo = await repos.createRepo('mono');
    await commitFiles(
      repo,
      'main',
      {
        'apps/a/kustomization.yaml': 'resources: [../../bases/web, cm.yaml]\npatches: [{path: ../../patches/p.yaml}]\n',
        'apps/a/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n',
        'apps/b/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n',
        'bases/web/kustomization.yaml': 'resources: [svc.yaml]\ncomponents: [../../components/c]\n',
        'bases/web/svc.yaml': 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\n',
        'components/c/kustomization.yaml': 'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n',
        'patches/p.yaml': 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\n',
        'patches/unused.yaml': 'x: 1\n',
        'apps/escape/kustomization.yaml': 'resources: [../../../outside]\n',
        'apps/escape/cm.yaml': 'x: 1\n',
        'charts/web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 1.0.0\n',
        'charts/web/templates/cm.yaml': 'x: 1\n',
        'vendor/big.bin': BIG,
      },
      'monorepo',
    );
    server = await repos.serveHttp();
  });

  afterAll(async () => {
    await repos?.dispose();
  });

  const source = async (cache: string) =>
    createGitSource(
      {
        gitCacheDir: join(repos.cacheRoot, cache),
        gitTimeout: '20s',
        allowInsecureHttp: true,
        maxFiles: 100,
        maxFileBytes: 4 << 20,
        maxTotalBytes: 8 << 20,
      },
      pino({ level: 'silent' }),
    );
  const fetch = async (s: Awaited<ReturnType<typeof source>>, path: string): Promise<FetchedSource> => {
    const r = await s.fetch({ url: server.url('mono'), ref: { branch: 'main' }, path }, undefined, signal());
    if (!r.ok) throw new Error(r.failure.message);
    return r.value;
  };

  it('checks out the path and the bases, components and patches it reaches, and fetches no other blob', async () => {
    const s = await source('reach');
    const a = await fetch(s, 'apps/a');
    expect(await tree(a.checkoutRoot)).toEqual([
      'apps/a/cm.yaml',
      'apps/a/kustomization.yaml',
      'bases/web/kustomization.yaml',
      'bases/web/svc.yaml',
      'components/c/kustomization.yaml',
      'patches/p.yaml',
    ]);
    // the 2 MiB blob never crossed the wire: the cache repo is far smaller than it
    const bytes = await dirBytes(join(repos.cacheRoot, 'reach'));
    expect(bytes).toBeLessThan(BIG.length / 4);
  });

  it('a plain directory is its own subtree', async () => {
    const b = await fetch(await source('plain'), 'apps/b');
    expect(await tree(b.checkoutRoot)).toEqual(['apps/b/cm.yaml']);
    expect(b.files.map((f) => f.path)).toEqual(['cm.yaml']);
  });

  it.each([
    ['a reference out of the repository', 'apps/escape'],
    ['a Helm chart (valuesFiles are relative to the repository root)', 'charts/web'],
  ])('%s takes the whole tree', async (_, path) => {
    const whole = await fetch(await source(`whole-${path.replace('/', '-')}`), path);
    expect(await tree(whole.checkoutRoot)).toContain('vendor/big.bin');
  });

  it('the path revision changes with what the package reads, not with the rest of the repository', async () => {
    const s = await source('revision');
    const a1 = await fetch(s, 'apps/a');
    const b1 = await fetch(s, 'apps/b');

    // a commit touching only apps/b: a's revision stands, b's moves
    const c2 = await commitFiles(repo, 'main', { 'apps/b/cm.yaml': 'kind: ConfigMap\nmetadata: {name: b2}\n' }, 'b');
    s.fetcher.forget(server.url('mono'));
    const a2 = await fetch(s, 'apps/a');
    const b2 = await fetch(s, 'apps/b');
    expect(a2.commit).toBe(c2);
    expect(a2.pathRevision).toBe(a1.pathRevision);
    expect(await a2.samePackageAt!(a1.commit)).toBe(true);
    expect(b2.pathRevision).not.toBe(b1.pathRevision);
    expect(await b2.samePackageAt!(b1.commit)).toBe(false);

    // a commit touching a base a reaches (and a file in patches/ it does not read): a moves
    await commitFiles(repo, 'main', { 'bases/web/svc.yaml': 'kind: Service\nmetadata: {name: web2}\n' }, 'base');
    s.fetcher.forget(server.url('mono'));
    const a3 = await fetch(s, 'apps/a');
    expect(a3.pathRevision).not.toBe(a2.pathRevision);
    expect(await a3.samePackageAt!(a2.commit)).toBe(false);
    await commitFiles(repo, 'main', { 'patches/unused.yaml': 'x: 2\n' }, 'unused');
    s.fetcher.forget(server.url('mono'));
    const a4 = await fetch(s, 'apps/a');
    expect(a4.pathRevision).toBe(a3.pathRevision);

    // a commit the cache never saw says nothing: not the same package
    expect(await a4.samePackageAt!('0'.repeat(40))).toBe(false);
  });
});

async function dirBytes(dir: string): Promise<number> {
  const { stat } = await import('node:fs/promises');
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += await dirBytes(p);
    else if (e.isFile()) total += (await stat(p)).size;
  }
  return total;
}

describe('a fleet of packages in one repository', () => {
  let repos: GitFixture;
  let server: GitHttpServer;
  const UNITS = 24; // past WHOLE_TREE_AFTER (16) in whole-checkouts.ts
  const BULK = 1000; // with the units' files, past SMALL_TREE_FILES: a small tree goes whole sooner (next describe)
  const signal = () => AbortSignal.timeout(30_000);

  beforeAll(async () => {
    repos = await startGitFixture();
    const repo = await repos.createRepo('fleet');
    const files: Record<string, string> = {};
    for (let i = 0; i < UNITS; i++)
      files[`fleet/u-${i}/cm.yaml`] = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: u-${i}}\n`;
    for (let i = 0; i < BULK; i++) files[`docs/page-${i}.md`] = `page ${i}\n`;
    files['fleet/k/kustomization.yaml'] = 'resources: [../u-0]\n';
    await commitFiles(repo, 'main', files, 'fleet');
    server = await repos.serveHttp();
  });

  afterAll(async () => {
    await repos?.dispose();
  });

  it('past a few packages of one commit, one whole checkout serves them all, with the same path revisions', async () => {
    const root = join(repos.cacheRoot, 'fleet-cache');
    const make = () =>
      createGitSource(
        {
          gitCacheDir: root,
          gitTimeout: '20s',
          allowInsecureHttp: true,
          maxFiles: 100,
          maxFileBytes: 1 << 20,
          maxTotalBytes: 1 << 20,
        },
        pino({ level: 'silent' }),
      );
    const fetchAll = async (s: Awaited<ReturnType<typeof make>>) => {
      const out: FetchedSource[] = [];
      for (let i = 0; i < UNITS; i++) {
        const r = await s.fetch(
          { url: server.url('fleet'), ref: { branch: 'main' }, path: `fleet/u-${i}` },
          undefined,
          signal(),
        );
        if (!r.ok) throw new Error(r.failure.message);
        out.push(r.value);
      }
      return out;
    };
    const first = await fetchAll(await make());
    // the first packages get sparse checkouts of their own; the rest share the commit's whole checkout
    const roots = new Set(first.map((f) => f.checkoutRoot));
    expect(roots.size).toBe(17);
    const wholeRoot = first.at(-1)!.checkoutRoot;
    expect(await tree(wholeRoot)).toContain('fleet/u-0/cm.yaml');
    // read from the whole checkout, a package still sees only its own directory
    for (const f of first) expect(f.files.map((x) => x.path)).toEqual(['cm.yaml']);
    // a new process (a restart) serves every package from that checkout: the same revisions, the same files
    const again = await fetchAll(await make());
    expect(new Set(again.map((f) => f.checkoutRoot))).toEqual(new Set([wholeRoot]));
    expect(again.map((f) => f.pathRevision)).toEqual(first.map((f) => f.pathRevision));
    expect(again.map((f) => f.files[0]!.content)).toEqual(first.map((f) => f.files[0]!.content));
    // each package's revision is its own: two units never share one
    expect(new Set(first.map((f) => f.pathRevision)).size).toBe(UNITS);
  });

  it('a fleet asking at once: the first package under the lock makes the whole checkout, and those that waited need no git', async () => {
    // a controller's start or a new commit of the fleet's repository: every unit asks within the same moment.
    // Before, the first WHOLE_TREE_AFTER got a sparse checkout each, in a row, while the rest waited.
    const fetcher = createGitFetcher({
      cacheRoot: join(repos.cacheRoot, 'at-once'),
      allowInsecureHttp: true,
      timeoutMs: 20_000,
    });
    const resolved = await fetcher.resolveRef(server.url('fleet'), { branch: 'main' }, undefined);
    if (!resolved.ok) throw new Error(resolved.failure.message);
    const served = await Promise.all(
      Array.from({ length: UNITS }, (_, i) =>
        fetcher.fetchRevision(server.url('fleet'), resolved.value.commit, undefined, { path: `fleet/u-${i}` }),
      ),
    );
    const dirs = served.map((r) => {
      if (!r.ok) throw new Error(r.failure.message);
      return r.value.dir;
    });
    expect(new Set(dirs).size).toBe(1);
    expect(fetcher.stats().checkouts).toBe(1);
    expect(fetcher.stats().servedWithoutGit).toBe(UNITS - 1);
    // the same answers as one package at a time gives (the first test's sequential fleet, its own cache)
    const alone = createGitFetcher({ cacheRoot: join(repos.cacheRoot, 'at-once-alone'), allowInsecureHttp: true });
    for (const i of [0, 7, UNITS - 1]) {
      const r = await alone.fetchRevision(server.url('fleet'), resolved.value.commit, undefined, {
        path: `fleet/u-${i}`,
      });
      if (!r.ok || !served[i]!.ok) throw new Error('fetch failed');
      expect(served[i]!.value.pathRevision).toBe(r.value.pathRevision);
      expect(served[i]!.value.paths).toEqual(r.value.paths);
    }
  });

  it('remembers a bounded number of commit-and-path answers (a fleet with a commit a minute would grow forever)', async () => {
    const fetcher = createGitFetcher({
      cacheRoot: join(repos.cacheRoot, 'memo-bound'),
      allowInsecureHttp: true,
      timeoutMs: 20_000,
      sparseMemoMax: 5,
    });
    const resolved = await fetcher.resolveRef(server.url('fleet'), { branch: 'main' }, undefined);
    if (!resolved.ok) throw new Error(resolved.failure.message);
    for (let i = 0; i < 12; i++) {
      const r = await fetcher.fetchRevision(server.url('fleet'), resolved.value.commit, undefined, {
        path: `fleet/u-${i}`,
      });
      expect(r.ok).toBe(true);
    }
    expect(fetcher.stats().memoEntries).toBe(5);
  });

  it('forgets the memo entry read least recently, not the one a unit reads every interval', async () => {
    const fetcher = createGitFetcher({
      cacheRoot: join(repos.cacheRoot, 'memo-lru'),
      allowInsecureHttp: true,
      timeoutMs: 20_000,
      sparseMemoMax: 3,
    });
    const resolved = await fetcher.resolveRef(server.url('fleet'), { branch: 'main' }, undefined);
    if (!resolved.ok) throw new Error(resolved.failure.message);
    const read = async (i: number) => {
      const r = await fetcher.fetchRevision(server.url('fleet'), resolved.value.commit, undefined, {
        path: `fleet/u-${i}`,
      });
      expect(r.ok).toBe(true);
    };
    // u-0 is read between every other package (a unit at an unchanged commit, each interval); 8 others pass
    await read(0);
    for (let i = 1; i <= 8; i++) {
      await read(i);
      await read(0);
    }
    const hits = fetcher.stats().memoHits!;
    expect(hits).toBe(8);
    await read(0);
    expect(fetcher.stats().memoHits).toBe(hits + 1);
    // u-1 was read once, long ago: forgotten
    await read(1);
    expect(fetcher.stats().memoHits).toBe(hits + 1);
    expect(fetcher.stats().memoEntries).toBe(3);
  });
});

describe('a fleet of kustomize overlays in one repository', () => {
  let repos: GitFixture;
  let server: GitHttpServer;
  const UNITS = 24; // a small tree (under SMALL_TREE_FILES in whole-checkouts.ts): whole from the second overlay
  const LINKED = 20; // this overlay's kustomization.yaml is a symbolic link: git reads it, not the whole checkout
  const path = (i: number) => `kfleet/o-${i}`;

  beforeAll(async () => {
    repos = await startGitFixture();
    const repo = await repos.createRepo('kfleet');
    const files: Record<string, FileChange> = {
      'kfleet/base/kustomization.yaml': 'resources: [cm.yaml]\n',
      'kfleet/base/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base}\n',
      'kfleet/shared/patch.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base}\ndata: {a: b}\n',
      'kfleet/unread/big.txt': BIG,
      'kfleet/linked.yaml': 'resources: [o-20/own.yaml]\n',
    };
    for (let i = 0; i < UNITS; i++) {
      files[`${path(i)}/own.yaml`] = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: own-${i}}\n`;
      // every other overlay reaches a base and a patch outside its directory; the others read only themselves
      files[`${path(i)}/kustomization.yaml`] =
        i === LINKED
          ? { symlink: '../linked.yaml' }
          : i % 2 === 0
            ? `resources: [../base, own.yaml]\npatches: [{path: ../shared/patch.yaml}]\nnamePrefix: u${i}-\n`
            : 'resources: [own.yaml]\n';
    }
    await commitFiles(repo, 'main', files, 'kustomize fleet');
    server = await repos.serveHttp();
  });

  afterAll(async () => {
    await repos?.dispose();
  });

  it('from the second overlay of a small commit on, the rest are read from its whole checkout without git, each with the set git works out', async () => {
    const fleet = createGitFetcher({
      cacheRoot: join(repos.cacheRoot, 'kfleet'),
      allowInsecureHttp: true,
      timeoutMs: 20_000,
    });
    const resolved = await fleet.resolveRef(server.url('kfleet'), { branch: 'main' }, undefined);
    if (!resolved.ok) throw new Error(resolved.failure.message);
    const commit = resolved.value.commit;
    const served = [];
    for (let i = 0; i < UNITS; i++) {
      const r = await fleet.fetchRevision(server.url('kfleet'), commit, undefined, { path: path(i) });
      if (!r.ok) throw new Error(r.failure.message);
      served.push(r.value);
    }
    // the first gets a sparse checkout, the second makes the whole checkout under the lock (a tree this small
    // costs one fetch, as one package does); from the third on, none but the linked one needs git
    expect(fleet.stats().servedWithoutGit).toBe(UNITS - 2 - 1);
    expect(new Set(served.map((s) => s.dir)).size).toBe(2);
    // each overlay read without git, alone in a cache of its own: git's walk of its kustomizations (sparseSet,
    // under the lock) gives the same set and revision
    for (let i = 2; i < UNITS; i++) {
      const alone = createGitFetcher({
        cacheRoot: join(repos.cacheRoot, `kfleet-alone-${i}`),
        allowInsecureHttp: true,
        timeoutMs: 20_000,
      });
      const r = await alone.fetchRevision(server.url('kfleet'), commit, undefined, { path: path(i) });
      if (!r.ok) throw new Error(r.failure.message);
      expect(served[i]!.paths, path(i)).toEqual(r.value.paths);
      expect(served[i]!.pathRevision, path(i)).toBe(r.value.pathRevision);
      expect(alone.stats().servedWithoutGit).toBe(0);
    }
    expect(served[18]!.paths).toEqual(['kfleet/base', 'kfleet/o-18', 'kfleet/shared/patch.yaml']);
    expect(served[19]!.paths).toEqual(['kfleet/o-19']);
  }, 120_000);
});
