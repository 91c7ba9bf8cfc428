import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitFetcher } from '../../src/adapters/git/index.ts';
import type { GitAuth } from '../../src/adapters/git/index.ts';
import type { Result } from '../../src/core/failure.ts';
import { commitFiles, installProcessSpy, startGitFixture } from '../support/git/index.ts';
import type { GitFixture, GitHttpServer, GitSshServer, ProcessSpy, SpiedProcess } from '../support/git/index.ts';

/**
 * Invariant 5 against real processes: run every kind of authenticated operation, succeeding and failing,
 * and look for the secrets in every child's argv and environment and in every failure message.
 */
describe('no secret reaches a command line, an environment or a message', () => {
  const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;
  const TOKEN = `tok-${randomBytes(12).toString('hex')}`;
  let repos: GitFixture;
  let basic: GitHttpServer;
  let bearer: GitHttpServer;
  let ssh: GitSshServer;
  let spy: ProcessSpy;
  let commit: string;
  const savedPath = process.env.PATH;

  beforeAll(async () => {
    repos = await startGitFixture();
    commit = await commitFiles(await repos.createRepo('private'), 'main', { 'a.yaml': 'a: 1\n' }, 'one');
    [basic, bearer, ssh] = await Promise.all([
      repos.serveHttp({ username: 'alice', password: PASSWORD }),
      repos.serveHttp({ bearerToken: TOKEN }),
      repos.serveSsh(),
    ]);
    spy = await installProcessSpy(['git', 'ssh']);
    process.env.PATH = `${spy.binDir}:${savedPath ?? ''}`;
  });

  afterAll(async () => {
    process.env.PATH = savedPath;
    await spy?.dispose();
    await repos?.dispose();
  });

  it('holds for basic auth, bearer tokens and ssh keys, on success and on failure', async () => {
    const keyLines = ssh.clientKey.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----'));
    const forms = [
      PASSWORD,
      encodeURIComponent(PASSWORD),
      Buffer.from(PASSWORD).toString('base64'),
      Buffer.from(`alice:${PASSWORD}`).toString('base64'),
      TOKEN,
      Buffer.from(TOKEN).toString('base64'),
      ...keyLines,
    ];
    const cases: [string, GitAuth][] = [
      [basic.url('private'), { username: 'alice', password: PASSWORD }],
      [basic.url('private'), { username: 'mallory', password: PASSWORD }],
      [bearer.url('private'), { bearerToken: TOKEN }],
      [basic.url('private'), { bearerToken: TOKEN }],
      [ssh.url('private'), { identity: ssh.clientKey, knownHosts: ssh.knownHosts }],
      [ssh.url('private'), { identity: ssh.clientKey, knownHosts: ssh.wrongKnownHosts }],
    ];

    spy.startProcScan();
    const results: Result<unknown>[] = [];
    for (const [url, auth] of cases) {
      // A fresh cache each time, so every case really fetches.
      const fetcher = createGitFetcher({
        cacheRoot: await mkdtemp(join(repos.cacheRoot, 'c-')),
        allowInsecureHttp: true,
        timeoutMs: 20_000,
      });
      results.push(await fetcher.resolveRef(url, { branch: 'main' }, auth));
      results.push(await fetcher.fetchRevision(url, commit, auth));
    }
    const seen = await spy.stop();

    // The operations did what they should (so the scan looked at real work).
    expect(results.map((r) => r.ok)).toEqual([
      true,
      true,
      false,
      false,
      true,
      true,
      false,
      false,
      true,
      true,
      false,
      false,
    ]);

    const messages = results.flatMap((r) => (r.ok ? [] : [r.failure.message]));
    for (const message of messages) for (const form of forms) expect(message).not.toContain(form);

    const wrapped = seen.filter((p) => p.source === 'wrapper');
    expect(wrapped.filter((p) => p.program === 'git').length).toBeGreaterThanOrEqual(12);
    expect(wrapped.filter((p) => p.program === 'ssh').length).toBeGreaterThanOrEqual(4);
    expect(seen.some((p) => p.source === 'proc' && p.argv.some((a) => a.includes('git')))).toBe(true);

    const leaks = (p: SpiedProcess): string[] =>
      forms.filter((f) => p.argv.some((a) => a.includes(f)) || p.env.some((e) => e.includes(f)));
    const leaking = seen.filter((p) => leaks(p).length > 0).map((p) => `${p.source} ${p.argv.slice(0, 3).join(' ')}`);
    expect(leaking).toEqual([]);

    // And no URL git was given carries userinfo with a password.
    const argvWithUserinfo = seen.flatMap((p) => p.argv).filter((a) => /^[a-z]+:\/\/[^/@\s]*:[^/@\s]*@/i.test(a));
    expect(argvWithUserinfo).toEqual([]);
  });
});
