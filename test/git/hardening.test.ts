import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reason } from '../../src/api/reasons.ts';
import { createGitFetcher } from '../../src/adapters/git/index.ts';
import type { RefSpec } from '../../src/adapters/git/index.ts';
import { commitFiles, git, installProcessSpy, startGitFixture } from '../support/git/index.ts';
import type { GitFixture, GitHttpServer, ProcessSpy, SpiedProcess, TestRepo } from '../support/git/index.ts';

/**
 * Issue 5, source: how git is run, seen from the git processes themselves (a PATH shim records the argv and
 * environment of every `git` the adapter starts). Hostile URLs and refs start no git at all; the git that
 * does run has GIT_ALLOW_PROTOCOL limited to the allowed schemes, hooks and submodules off, no system or
 * user config, and nothing from the spec in an option position.
 */
describe('how git runs', () => {
  const marker = join(tmpdir(), `psync-pwned-${process.pid}-${Date.now()}`);
  let repos: GitFixture;
  let repo: TestRepo;
  let server: GitHttpServer;
  let spy: ProcessSpy;
  let withSubmodule: string;
  const savedPath = process.env.PATH;

  beforeAll(async () => {
    repos = await startGitFixture();
    repo = await repos.createRepo('hardening');
    const base = await commitFiles(repo, 'main', { 'app/cm.yaml': 'a: 1\n' }, 'base');
    // A gitlink and a .gitmodules that would make a recursive clone run the file transport (and ext::).
    const gitmodules =
      `[submodule "evil"]\n\tpath = app/vendor\n\turl = file://${repos.root}\n` +
      `[submodule "ext"]\n\tpath = app/ext\n\turl = ext::sh -c touch% ${marker}\n`;
    const stream =
      `commit refs/heads/main\ncommitter T <t@t.invalid> 1700000000 +0000\ndata 3\nsub\nfrom ${base}\n` +
      `M 160000 ${base} app/vendor\nM 160000 ${base} app/ext\n` +
      `M 100644 inline .gitmodules\ndata ${Buffer.byteLength(gitmodules)}\n${gitmodules}\n` +
      `M 100644 inline app/.gitattributes\ndata 22\n*.yaml filter=evil -x\n\ndone\n`;
    await git(['fast-import', '--quiet', '--done', '--force'], { cwd: repo.dir, input: stream });
    withSubmodule = (await git(['rev-parse', 'refs/heads/main'], { cwd: repo.dir })).trim();
    server = await repos.serveHttp();
    spy = await installProcessSpy(['git']);
    process.env.PATH = `${spy.binDir}:${savedPath ?? ''}`;
  });

  afterAll(async () => {
    process.env.PATH = savedPath;
    await spy?.dispose();
    await repos?.dispose();
  });

  const gits = (seen: SpiedProcess[]) => seen.filter((p) => p.source === 'wrapper' && p.program === 'git');

  it('hostile URLs and refs → InvalidURL / InvalidRef, and no git process starts', async () => {
    const fetcher = createGitFetcher({ cacheRoot: join(repos.cacheRoot, 'hostile'), timeoutMs: 10_000 });
    const good = server.url('hardening');
    const commit = 'a'.repeat(40);
    const urls = [
      `ext::sh -c touch% ${marker}`,
      'fd::17',
      '--upload-pack=touch /tmp/x',
      '-oProxyCommand=x@h:r',
      'ssh://-oProxyCommand=x/r',
      'git@-oProxyCommand=x:r',
      'https://alice:hunter2@example.com/r.git',
      'https://alice%3Ahunter2@example.com/r.git',
      'https://example.com/r%0a.git',
      `file://${repos.root}/hardening.git`,
      `${repos.root}/hardening.git`,
      './hardening.git',
      good, // plain http, and this fetcher does not allow it
      'https://exa mple.com/r.git',
    ];
    const refs: RefSpec[] = [
      { branch: '-x' },
      { branch: '--upload-pack=touch /tmp/x' },
      { branch: 'a..b' },
      { branch: 'a.lock' },
      { branch: 'x@{1}' },
      { branch: 'refs/heads/x/' },
      { branch: 'a\\b' },
      { tag: '-v1' },
      { commit: 'a'.repeat(39) },
      { commit: 'a'.repeat(41) },
      { commit: 'a'.repeat(63) },
    ];
    const insecure = createGitFetcher({ cacheRoot: join(repos.cacheRoot, 'hostile'), allowInsecureHttp: true });
    const results: [string, string | undefined][] = [];
    for (const url of urls) {
      for (const r of [
        await fetcher.resolveRef(url, undefined, undefined),
        await fetcher.fetchRevision(url, commit, undefined),
      ])
        results.push([url, r.ok ? undefined : r.failure.reason]);
    }
    for (const ref of refs) {
      const r = await insecure.resolveRef(good, ref, undefined);
      results.push([JSON.stringify(ref), r.ok ? undefined : r.failure.reason]);
    }
    const seen = await spy.stop();
    expect(results.filter(([, reason]) => reason !== Reason.InvalidURL && reason !== Reason.InvalidRef)).toEqual([]);
    expect(results.filter(([what]) => what.startsWith('{')).every(([, r]) => r === Reason.InvalidRef)).toBe(true);
    expect(gits(seen)).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });

  it('runs git with only the allowed protocols, no hooks, no submodules, no outside config', async () => {
    const fetcher = createGitFetcher({
      cacheRoot: join(repos.cacheRoot, 'run'),
      allowInsecureHttp: true,
      timeoutMs: 20_000,
    });
    const resolved = await fetcher.resolveRef(server.url('hardening'), { branch: 'main' }, undefined);
    expect(resolved).toMatchObject({ ok: true, value: { commit: withSubmodule } });
    const checkout = await fetcher.fetchRevision(server.url('hardening'), withSubmodule, undefined);
    if (!checkout.ok) throw new Error(checkout.failure.message);
    // a package path: a partial fetch into another cache, the sparse set, blobs by id, the sparse read-tree
    const sparse = await createGitFetcher({
      cacheRoot: join(repos.cacheRoot, 'run-sparse'),
      allowInsecureHttp: true,
      timeoutMs: 20_000,
    }).fetchRevision(server.url('hardening'), withSubmodule, undefined, { path: 'app' });
    if (!sparse.ok) throw new Error(sparse.failure.message);
    const seen = gits(await spy.stop());

    expect(seen.length).toBeGreaterThanOrEqual(3); // ls-remote, init, fetch, read-tree…
    for (const p of seen) {
      const env = Object.fromEntries(p.env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
      expect(env.GIT_ALLOW_PROTOCOL, p.argv.join(' ')).toBe('https:ssh:http');
      expect(env.GIT_CONFIG_NOSYSTEM).toBe('1');
      expect(env.GIT_TERMINAL_PROMPT).toBe('0');
      expect(env.HOME?.startsWith(join(repos.cacheRoot, 'run'))).toBe(true);
      const configs = p.argv.flatMap((a, i) => (p.argv[i - 1] === '-c' ? [a] : []));
      expect(configs).toEqual(
        expect.arrayContaining([
          'core.hooksPath=/dev/null',
          'protocol.file.allow=never',
          'protocol.ext.allow=never',
          'submodule.recurse=false',
          'fetch.recurseSubmodules=false',
        ]),
      );
      // nothing that came from the spec sits where git reads options: the URL and the refs follow "--"
      const dashdash = p.argv.indexOf('--');
      const options = (dashdash < 0 ? p.argv : p.argv.slice(0, dashdash)).filter((a) => a.startsWith('-'));
      expect(
        options.filter(
          (a) =>
            !/^(-c|--quiet|--bare|--symref|--depth=1|--no-tags|--no-write-fetch-head|--no-recurse-submodules|--reset|-u|-e|--tags|--filter=blob:none|-r|-t|-z|--full-tree|--refetch)$/.test(
              a,
            ),
        ),
      ).toEqual([]);
      if (p.argv.includes(server.url('hardening')))
        expect(p.argv.indexOf(server.url('hardening'))).toBeGreaterThan(dashdash);
    }
    expect(seen.some((p) => p.argv.includes('submodule') || p.argv.includes('clone'))).toBe(false);
    // the whole tree: one fetch; the package path: the commit and its trees, then its blobs by id
    expect(seen.filter((p) => p.argv.includes('fetch'))).toHaveLength(3);
    // the gitlinks are empty directories; no submodule was fetched, no command ran
    expect(await readdir(join(checkout.value.dir, 'app', 'vendor'))).toEqual([]);
    expect(await readdir(join(checkout.value.dir, 'app', 'ext'))).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });
});
