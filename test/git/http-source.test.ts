import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reason } from '../../src/api/reasons.ts';
import { createGitFetcher, readPackageFiles } from '../../src/adapters/git/index.ts';
import type { GitFetcher } from '../../src/adapters/git/index.ts';
import { commitFiles, gitEnvForTests, headOf, startGitFixture } from '../support/git/index.ts';
import type { GitFixture, GitHttpServer, TestRepo } from '../support/git/index.ts';

// Secrets with characters that break naive quoting, URL-encoding and shell scripts.
const PASSWORD = `p@ss:w/rd%20"'$(touch /tmp/psync-pwned)\`x\`;`;
const TOKEN = 'tok_9f8e7d6c5b4a';
const limits = { maxFiles: 100, maxFileBytes: 1 << 20, maxTotalBytes: 1 << 22 };

describe('git source over smart HTTP (git http-backend)', () => {
  let repos: GitFixture;
  let repo: TestRepo;
  let head: string;
  let anonymous: GitHttpServer;
  let basic: GitHttpServer;
  let bearer: GitHttpServer;
  let fetcher: GitFetcher;

  beforeAll(async () => {
    repos = await startGitFixture();
    repo = await repos.createRepo('web');
    head = await commitFiles(repo, 'main', { 'deploy/app.yaml': 'kind: ConfigMap\n' }, 'initial');
    [anonymous, basic, bearer] = await Promise.all([
      repos.serveHttp(),
      repos.serveHttp({ username: 'alice', password: PASSWORD }),
      repos.serveHttp({ bearerToken: TOKEN }),
    ]);
    fetcher = createGitFetcher({ cacheRoot: repos.cacheRoot, allowInsecureHttp: true, timeoutMs: 20_000 });
  });

  afterAll(async () => {
    await repos?.dispose();
  });

  it('anonymous: resolves HEAD and fetches a checkout', async () => {
    const resolved = await fetcher.resolveRef(anonymous.url('web'), undefined, undefined);
    expect(resolved).toEqual({ ok: true, value: { commit: head, refLabel: 'main', revision: `main@sha1:${head}` } });
    const checkout = await fetcher.fetchRevision(anonymous.url('web'), head, undefined);
    expect(checkout.ok).toBe(true);
    if (!checkout.ok) return;
    const files = await readPackageFiles(checkout.value.dir, 'deploy', limits);
    expect(files).toEqual({ ok: true, value: [{ path: 'app.yaml', content: 'kind: ConfigMap\n' }] });
  });

  it('basic auth with the right password resolves and fetches', async () => {
    const auth = { username: 'alice', password: PASSWORD };
    const resolved = await fetcher.resolveRef(basic.url('web'), { branch: 'main' }, auth);
    expect(resolved.ok && resolved.value.commit).toBe(head);
    const checkout = await fetcher.fetchRevision(basic.url('web'), head, auth);
    expect(checkout.ok).toBe(true);
    // The password travelled through the askpass script as data, never as shell code.
    expect(existsSync('/tmp/psync-pwned')).toBe(false);
  });

  it.each([
    ['a wrong password', { username: 'alice', password: 'wrong' }],
    ['a wrong user', { username: 'bob', password: PASSWORD }],
    ['no credentials', undefined],
    ['a bearer token instead', { bearerToken: TOKEN }],
  ])('basic auth with %s → AuthenticationFailed', async (_what, auth) => {
    const resolved = await fetcher.resolveRef(basic.url('web'), { branch: 'main' }, auth);
    expect(!resolved.ok && resolved.failure.reason).toBe(Reason.AuthenticationFailed);
    const checkout = await fetcher.fetchRevision(basic.url('web'), head, auth);
    expect(!checkout.ok && checkout.failure.reason).toBe(Reason.AuthenticationFailed);
  });

  it('bearer token: right token works, wrong or missing token fails', async () => {
    const ok = await fetcher.resolveRef(bearer.url('web'), { branch: 'main' }, { bearerToken: TOKEN });
    expect(ok.ok && ok.value.commit).toBe(head);
    expect((await fetcher.fetchRevision(bearer.url('web'), head, { bearerToken: TOKEN })).ok).toBe(true);
    for (const auth of [{ bearerToken: 'tok_wrong' }, undefined]) {
      const r = await fetcher.resolveRef(bearer.url('web'), { branch: 'main' }, auth);
      expect(!r.ok && r.failure.reason).toBe(Reason.AuthenticationFailed);
    }
  });

  it('refuses plain http unless the fetcher allows it', async () => {
    const strict = createGitFetcher({ cacheRoot: repos.cacheRoot, timeoutMs: 5000 });
    const r = await strict.resolveRef(anonymous.url('web'), undefined, undefined);
    expect(!r.ok && r.failure.reason).toBe(Reason.InvalidURL);
  });

  it('the test server accepts pushes (http.receivepack)', async () => {
    const work = await mkdtemp(join(tmpdir(), 'psync-push-'));
    try {
      const run = (args: string[]) => promisify(execFile)('git', args, { cwd: work, env: gitEnvForTests(work) });
      await run(['clone', '-q', anonymous.url('web'), 'c']);
      await run([
        '-C',
        'c',
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@t',
        'commit',
        '-q',
        '--allow-empty',
        '-m',
        'pushed',
      ]);
      await run(['-C', 'c', 'push', '-q', 'origin', 'main']);
      const { stdout } = await run(['-C', 'c', 'rev-parse', 'HEAD']);
      expect(await headOf(repo, 'main')).toBe(stdout.trim());
      head = stdout.trim();
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it('the test server inflates gzip request bodies', async () => {
    // A protocol v0 upload-pack request, gzip'd the way git sends large negotiation bodies.
    const want = `want ${head}\n`;
    const body = `${(want.length + 4).toString(16).padStart(4, '0')}${want}00000009done\n`;
    const res = await fetch(`${anonymous.url('web')}/git-upload-pack`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-git-upload-pack-request', 'Content-Encoding': 'gzip' },
      body: gzipSync(body),
    });
    expect(res.status).toBe(200);
    expect(
      Buffer.from(await res.arrayBuffer())
        .subarray(0, 8)
        .toString(),
    ).toBe('0008NAK\n');
  });
});
