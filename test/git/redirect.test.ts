import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reason } from '../../src/api/reasons.ts';
import { createGitFetcher } from '../../src/adapters/git/index.ts';
import type { GitAuth } from '../../src/adapters/git/index.ts';
import { commitFiles, startGitFixture } from '../support/git/index.ts';
import type { GitFixture, GitHttpServer } from '../support/git/index.ts';

/**
 * A git server that redirects to another host must not hand that host the credentials: git asks the
 * askpass helper again for the new host (and would get the same password), and it adds http.extraHeader
 * (the bearer token) to every later request, wherever the redirect pointed. The "other host" here is a
 * proxy on `localhost` in front of a real git server, recording every Authorization header it receives.
 */
describe('credentials and HTTP redirects', () => {
  const PASSWORD = 'redirect-pw-5be1c0';
  const TOKEN = 'redirect-tok-77a9d2';
  let repos: GitFixture;
  let backend: GitHttpServer;
  let other: Server;
  let redirector: Server;
  let commit: string;
  const received: string[] = [];

  const listen = async (server: Server) => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return (server.address() as AddressInfo).port;
  };

  beforeAll(async () => {
    repos = await startGitFixture();
    commit = await commitFiles(await repos.createRepo('moved'), 'main', { 'a.yaml': 'a: 1\n' }, 'one');
    backend = await repos.serveHttp();
    // the other host: asks for Basic credentials (except under /open/), records whatever arrives, then
    // serves the real repository
    other = createServer((req, res) => {
      const auth = req.headers.authorization;
      const open = req.url?.startsWith('/open/') === true;
      const path = open ? req.url?.slice('/open'.length) : req.url;
      if (!auth && !open) {
        req.resume();
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="other"' }).end();
        return;
      }
      if (auth) received.push(auth);
      const headers = { ...req.headers, host: `127.0.0.1:${backend.port}` };
      delete headers.authorization;
      const upstream = request({ host: '127.0.0.1', port: backend.port, path, method: req.method, headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      req.pipe(upstream);
    });
    const otherPort = await listen(other);
    redirector = createServer((req, res) => {
      req.resume();
      res.writeHead(301, { location: `http://localhost:${otherPort}${req.url ?? '/'}` }).end();
    });
    await listen(redirector);
  });

  afterAll(async () => {
    other?.closeAllConnections();
    redirector?.closeAllConnections();
    await Promise.all([new Promise((r) => other?.close(r)), new Promise((r) => redirector?.close(r))]);
    await repos?.dispose();
  });

  // Basic: the other host asks for credentials. Bearer: it serves the ref advertisement without asking (curl
  // strips the header on the redirect it follows) and sees whether git's later requests carry the token.
  it.each<[string, GitAuth, string]>([
    ['basic auth', { username: 'alice', password: PASSWORD }, '/moved.git'],
    ['a bearer token', { bearerToken: TOKEN }, '/open/moved.git'],
  ])('%s is never sent to the host a redirect points to: FetchFailed naming the redirect', async (_w, auth, path) => {
    received.length = 0;
    const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}${path}`;
    const fetcher = createGitFetcher({
      cacheRoot: await mkdtemp(join(repos.cacheRoot, 'c-')),
      allowInsecureHttp: true,
    });
    const resolved = await fetcher.resolveRef(url, { branch: 'main' }, auth);
    const fetched = await fetcher.fetchRevision(url, commit, auth);
    expect(received).toEqual([]);
    for (const r of [resolved, fetched]) {
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.failure.reason).toBe(Reason.FetchFailed);
      expect(r.failure.message).toContain('redirect');
    }
  });

  it('anonymous access still follows a redirect (there is nothing to leak)', async () => {
    const base = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    const fetcher = createGitFetcher({
      cacheRoot: await mkdtemp(join(repos.cacheRoot, 'c-')),
      allowInsecureHttp: true,
    });
    expect(await fetcher.resolveRef(`${base}/open/moved.git`, { branch: 'main' }, undefined)).toMatchObject({
      ok: true,
      value: { commit },
    });
    // where the other host wants credentials and there are none, git fails having sent nothing
    received.length = 0;
    const r = await fetcher.resolveRef(`${base}/moved.git`, { branch: 'main' }, undefined);
    expect(!r.ok && r.failure.reason).toBe(Reason.AuthenticationFailed);
    expect(received).toEqual([]);
  });
});
