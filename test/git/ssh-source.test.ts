import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reason } from '../../src/api/reasons.ts';
import { createGitFetcher, readPackageFiles } from '../../src/adapters/git/index.ts';
import type { GitFetcher } from '../../src/adapters/git/index.ts';
import { commitFiles, startGitFixture } from '../support/git/index.ts';
import type { GitFixture, GitSshServer } from '../support/git/index.ts';

describe('git source over SSH (Debian sshd, key-only, git-shell)', () => {
  let repos: GitFixture;
  let server: GitSshServer;
  let head: string;
  let fetcher: GitFetcher;

  beforeAll(async () => {
    repos = await startGitFixture();
    const repo = await repos.createRepo('infra');
    head = await commitFiles(repo, 'main', { 'ns.yaml': 'kind: Namespace\n' }, 'initial');
    server = await repos.serveSsh();
    fetcher = createGitFetcher({ cacheRoot: repos.cacheRoot, timeoutMs: 20_000 });
  });

  afterAll(async () => {
    await repos?.dispose();
  });

  it('the right key and known_hosts: resolves and fetches', async () => {
    const auth = { identity: server.clientKey, knownHosts: server.knownHosts };
    const resolved = await fetcher.resolveRef(server.url('infra'), { branch: 'main' }, auth);
    expect(resolved).toEqual({ ok: true, value: { commit: head, refLabel: 'main', revision: `main@sha1:${head}` } });
    const checkout = await fetcher.fetchRevision(server.url('infra'), head, auth);
    expect(checkout.ok).toBe(true);
    if (!checkout.ok) return;
    expect(
      await readPackageFiles(checkout.value.dir, '.', { maxFiles: 10, maxFileBytes: 1000, maxTotalBytes: 1000 }),
    ).toEqual({
      ok: true,
      value: [{ path: 'ns.yaml', content: 'kind: Namespace\n' }],
    });
  });

  it('a key the server does not know → AuthenticationFailed', async () => {
    const auth = { identity: server.wrongKey, knownHosts: server.knownHosts };
    const resolved = await fetcher.resolveRef(server.url('infra'), { branch: 'main' }, auth);
    expect(!resolved.ok && resolved.failure.reason).toBe(Reason.AuthenticationFailed);
    const checkout = await fetcher.fetchRevision(server.url('infra'), head, auth);
    expect(!checkout.ok && checkout.failure.reason).toBe(Reason.AuthenticationFailed);
  });

  it('known_hosts with another host key → AuthenticationFailed naming host key verification', async () => {
    const auth = { identity: server.clientKey, knownHosts: server.wrongKnownHosts };
    const resolved = await fetcher.resolveRef(server.url('infra'), { branch: 'main' }, auth);
    expect(resolved.ok).toBe(false);
    if (resolved.ok) return;
    expect(resolved.failure.reason).toBe(Reason.AuthenticationFailed);
    expect(resolved.failure.message).toMatch(/host key/);
  });

  it('known_hosts for another host → AuthenticationFailed (never trust on first use)', async () => {
    const otherHost = server.knownHosts.replace('[127.0.0.1]', '[localhost]');
    const resolved = await fetcher.resolveRef(server.url('infra'), undefined, {
      identity: server.clientKey,
      knownHosts: otherHost,
    });
    expect(!resolved.ok && resolved.failure.reason).toBe(Reason.AuthenticationFailed);
  });

  it('no auth material for an ssh URL → InvalidAuthSecret before any connection', async () => {
    const resolved = await fetcher.resolveRef(server.url('infra'), undefined, undefined);
    expect(!resolved.ok && resolved.failure.reason).toBe(Reason.InvalidAuthSecret);
  });

  it('a key that is not a key → InvalidAuthSecret', async () => {
    const identity = '-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEga2V5\n-----END OPENSSH PRIVATE KEY-----\n';
    const resolved = await fetcher.resolveRef(server.url('infra'), undefined, {
      identity,
      knownHosts: server.knownHosts,
    });
    expect(!resolved.ok && resolved.failure.reason).toBe(Reason.InvalidAuthSecret);
  });
});
