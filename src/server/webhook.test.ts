import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { PackageSync } from '../api/packagesync.ts';
import { startHttpServers, type RunningServers } from './http.ts';
import {
  authenticate,
  parsePush,
  repoIdentity,
  WEBHOOK_SECRET_ANNOTATION,
  webhookRoutes,
  type PackageSyncRef,
} from './webhook.ts';

const TOKEN = 's3cret-token';
const sign = (body: string, token = TOKEN) => `sha256=${createHmac('sha256', token).update(body).digest('hex')}`;

describe('repoIdentity', () => {
  it.each([
    ['https://github.com/Org/repo.git', 'github.com/Org/repo'],
    ['https://GitHub.com/Org/repo/', 'github.com/Org/repo'],
    ['git@github.com:Org/repo.git', 'github.com/Org/repo'],
    ['ssh://git@github.com:22/Org/repo.git', 'github.com/Org/repo'],
    ['http://user:pw@127.0.0.1:8080/bench.git', '127.0.0.1/bench'],
  ])('%s → %s', (url, want) => expect(repoIdentity(url)).toBe(want));

  it('is undefined for what is not a repository URL', () => {
    expect(repoIdentity('not a url')).toBeUndefined();
    expect(repoIdentity('https://github.com/')).toBeUndefined();
  });
});

describe('authenticate', () => {
  const body = Buffer.from('{"ref":"refs/heads/main"}');
  it('accepts a GitHub signature, a GitLab token and a bearer token made with the token', () => {
    expect(authenticate({ 'x-hub-signature-256': sign(body.toString()) }, body, TOKEN)).toBeUndefined();
    expect(authenticate({ 'x-gitlab-token': TOKEN }, body, TOKEN)).toBeUndefined();
    expect(authenticate({ authorization: `Bearer ${TOKEN}` }, body, TOKEN)).toBeUndefined();
  });

  it('refuses wrong proofs, and says why without repeating the token', () => {
    const why = [
      authenticate({ 'x-hub-signature-256': sign(body.toString(), 'other') }, body, TOKEN),
      authenticate({ 'x-hub-signature-256': 'sha1=abc' }, body, TOKEN),
      authenticate({ 'x-gitlab-token': 'wrong' }, body, TOKEN),
      authenticate({ authorization: `Bearer ${TOKEN}x` }, body, TOKEN),
      authenticate({}, body, TOKEN),
    ];
    for (const w of why) {
      expect(w).toBeTypeOf('string');
      expect(w).not.toContain(TOKEN);
    }
  });

  it('binds the signature to the body', () => {
    const sig = sign(body.toString());
    expect(authenticate({ 'x-hub-signature-256': sig }, Buffer.from('{}'), TOKEN)).toMatch(/mismatch/);
  });
});

describe('parsePush', () => {
  it('reads GitHub, GitLab and generic payloads', () => {
    const gh = parsePush(
      { 'x-github-event': 'push' },
      Buffer.from(JSON.stringify({ repository: { clone_url: 'https://g/o/r.git', ssh_url: 'git@g:o/r.git' } })),
    );
    expect(gh).toEqual({ kind: 'github', event: 'push', urls: ['https://g/o/r.git', 'git@g:o/r.git'], isPush: true });
    expect(parsePush({ 'x-github-event': 'ping' }, Buffer.from('{}')).isPush).toBe(false);
    const gl = parsePush(
      { 'x-gitlab-event': 'Push Hook' },
      Buffer.from(JSON.stringify({ project: { git_http_url: 'https://gl/o/r.git' } })),
    );
    expect(gl.urls).toEqual(['https://gl/o/r.git']);
    expect(parsePush({}, Buffer.from('{"urls":["a","b"],"url":"c"}')).urls).toEqual(['c', 'a', 'b']);
    expect(parsePush({}, Buffer.from('')).urls).toEqual([]);
    expect(() => parsePush({}, Buffer.from('not json'))).toThrow();
  });
});

describe('the receiver', () => {
  let servers: RunningServers | undefined;
  afterEach(() => servers?.close());

  const ps = (name: string, url: string, secret?: string): PackageSync =>
    ({
      apiVersion: 'packagesync.io/v1alpha1',
      kind: 'PackageSync',
      metadata: {
        name,
        namespace: 'team',
        ...(secret ? { annotations: { [WEBHOOK_SECRET_ANNOTATION]: secret } } : {}),
      },
      spec: { source: { url } },
    }) as unknown as PackageSync;

  async function receiver(
    opts: { readSecret?: () => Promise<Record<string, string> | undefined>; within?: number } = {},
  ) {
    const triggered: PackageSyncRef[] = [];
    const logs: string[] = [];
    const log = (obj: object, msg: string) => void logs.push(`${msg} ${JSON.stringify(obj)}`);
    const all = [
      ps('web', 'https://git.example/platform/apps.git', 'hook'),
      ps('api', 'git@git.example:platform/apps.git', 'hook'),
      ps('other-repo', 'https://git.example/platform/infra.git', 'hook'),
      ps('other-secret', 'https://git.example/platform/apps.git', 'hook2'),
      ps('no-hook', 'https://git.example/platform/apps.git'),
    ];
    servers = await startHttpServers([
      {
        bindAddress: '127.0.0.1:0',
        routes: webhookRoutes(
          {
            list: async (ns) => all.filter((p) => p.metadata.namespace === ns),
            readSecret: opts.readSecret ?? (async (_ns, name) => (name === 'hook' ? { token: TOKEN } : undefined)),
            trigger: (refs) => void triggered.push(...refs),
            log: { info: log, warn: log },
          },
          opts.within,
        ),
      },
    ]);
    const base = `http://127.0.0.1:${servers.addresses[0]!.port}`;
    return { triggered, logs, base };
  }

  it('triggers the PackageSyncs that share the Secret and follow the pushed repository', async () => {
    const { triggered, logs, base } = await receiver();
    const body = JSON.stringify({
      ref: 'refs/heads/main',
      repository: { clone_url: 'https://git.example/platform/apps' },
    });
    const res = await fetch(`${base}/hook/team/web`, {
      method: 'POST',
      headers: { 'x-github-event': 'push', 'x-hub-signature-256': sign(body) },
      body,
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ triggered: ['team/web', 'team/api'] });
    expect(triggered.map((r) => r.name)).toEqual(['web', 'api']);
    expect(logs.join('\n')).not.toContain(TOKEN);
  });

  it('a generic call without a URL triggers the named PackageSync only', async () => {
    const { triggered, base } = await receiver();
    const res = await fetch(`${base}/hook/team/api`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(202);
    expect(triggered.map((r) => r.name)).toEqual(['api']);
  });

  it('refuses bad tokens, unknown or unconfigured PackageSyncs, and other methods, triggering nothing', async () => {
    const { triggered, logs, base } = await receiver();
    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${base}${path}`, { method: 'POST', headers, body: '{}' }).then((r) => r.status);
    // issue 35: the same answer, status and body, whether the PackageSync exists or not
    const answer = (path: string, headers: Record<string, string>) =>
      fetch(`${base}${path}`, { method: 'POST', headers, body: '{}' }).then(
        async (r) => `${r.status} ${await r.text()}`,
      );
    const absent = await answer('/hook/team/absent', { 'x-gitlab-token': 'guess' });
    expect(absent).toBe('404 {"error":"not found"}\n');
    expect(await answer('/hook/team/web', { 'x-gitlab-token': 'guess' })).toBe(absent);
    expect(await answer('/hook/team/web', {})).toBe(absent);
    expect(await answer('/hook/team/web', { authorization: 'Bearer guess' })).toBe(absent);
    expect(await answer('/hook/team/no-hook', { 'x-gitlab-token': 'guess' })).toBe(absent);
    expect(await answer('/hook/team/other-secret', { 'x-gitlab-token': TOKEN })).toBe(absent); // its Secret has no token
    expect(await post('/hook/team/no-hook', { 'x-gitlab-token': TOKEN })).toBe(404);
    expect(await post('/hook/team/absent', { 'x-gitlab-token': TOKEN })).toBe(404);
    expect(await post('/hook/team', { 'x-gitlab-token': TOKEN })).toBe(404);
    expect(await post('/hook/Team/web', { 'x-gitlab-token': TOKEN })).toBe(404);
    expect((await fetch(`${base}/hook/team/web`)).status).toBe(405);
    expect(triggered).toEqual([]);
    expect(logs.join('\n')).not.toContain(TOKEN);
  });

  // ADR 0032: the API server (or one tenant's Secret read) hanging never holds the receiver's callers
  it('answers 503 when a call cannot be handled in time, and keeps answering the next ones', async () => {
    const { base, logs } = await receiver({ readSecret: () => new Promise(() => undefined), within: 200 });
    const call = () =>
      fetch(`${base}/hook/team/web`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    const res = await call();
    expect(res.status).toBe(503);
    expect((await call()).status).toBe(503);
    expect((await fetch(`${base}/hook/team/absent`, { method: 'POST' })).status).toBe(404);
    expect(logs.join('\n')).toContain('not handled in time');
  });

  it('answers a GitHub ping without triggering', async () => {
    const { triggered, base } = await receiver();
    const res = await fetch(`${base}/hook/team/web`, {
      method: 'POST',
      headers: { 'x-github-event': 'ping', 'x-hub-signature-256': sign('{}') },
      body: '{}',
    });
    expect(res.status).toBe(200);
    expect(triggered).toEqual([]);
  });
});
