import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadKubeconfig, resolveKubeconfig, type KubeconfigDocument } from './kubeconfig.ts';

const tmp = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const CA = '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nsecret-key-material\n-----END PRIVATE KEY-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const SECRETS = ['s3cret-token', 'hunter2', 'secret-key-material', b64(KEY), b64(CERT)];

/** One cluster, one user, one context named `ctx`. */
function config(user: Record<string, unknown> | undefined, cluster: Record<string, unknown> = {}, namespace?: string) {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://api.example:6443/', ...cluster } }],
    users: user ? [{ name: 'u', user }] : [],
    contexts: [{ name: 'ctx', context: { cluster: 'c', ...(user ? { user: 'u' } : {}), namespace } }],
    'current-context': 'ctx',
  };
}

const doc = (data: unknown, file = '/nowhere/config'): KubeconfigDocument => ({ file, data });

/** A fresh directory under tmp holding `files` (name → content). */
function dir(name: string, files: Record<string, string>): string {
  const d = join(tmp, name);
  mkdirSync(d, { recursive: true });
  for (const [f, content] of Object.entries(files)) writeFileSync(join(d, f), content);
  return d;
}

async function errorOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

describe('resolveKubeconfig: cluster and TLS', () => {
  it('reads server (without a trailing slash), CA data, client certificate and key data, namespace', async () => {
    const kc = await resolveKubeconfig([
      doc(
        config(
          { 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY) },
          { 'certificate-authority-data': b64(CA) },
          'team-a',
        ),
      ),
    ]);
    expect(kc.info).toMatchObject({
      context: 'ctx',
      cluster: 'c',
      user: 'u',
      server: 'https://api.example:6443',
      namespace: 'team-a',
      insecureSkipTlsVerify: false,
      auth: ['client-certificate'],
    });
    expect(kc.tls.ca?.toString()).toBe(CA);
    expect(kc.tls.cert?.toString()).toBe(CERT);
    expect(kc.tls.key?.toString()).toBe(KEY);
    expect(kc.tls.rejectUnauthorized).toBeUndefined();
    expect(await kc.headers()).toEqual({});
  });

  it('reads certificate files relative to the kubeconfig file, as kubectl does', async () => {
    const d = dir('relative', { 'ca.crt': CA });
    mkdirSync(join(d, 'pki'), { recursive: true });
    writeFileSync(join(d, 'pki', 'client.crt'), CERT);
    writeFileSync(join(d, 'pki', 'client.key'), KEY);
    writeFileSync(
      join(d, 'config'),
      stringify(
        config(
          { 'client-certificate': 'pki/client.crt', 'client-key': join(d, 'pki', 'client.key') },
          { 'certificate-authority': 'ca.crt' },
        ),
      ),
    );
    const kc = await loadKubeconfig({ path: join(d, 'config'), env: {} });
    expect(kc.tls.ca?.toString()).toBe(CA);
    expect(kc.tls.cert?.toString()).toBe(CERT);
    expect(kc.tls.key?.toString()).toBe(KEY);
    expect(kc.info.source).toBe(join(d, 'config'));
  });

  it('data wins over a file, as in client-go', async () => {
    const kc = await resolveKubeconfig([
      doc(config(undefined, { 'certificate-authority-data': b64(CA), 'certificate-authority': '/does/not/exist' })),
    ]);
    expect(kc.tls.ca?.toString()).toBe(CA);
  });

  it('insecure-skip-tls-verify and tls-server-name', async () => {
    const kc = await resolveKubeconfig([
      doc(config(undefined, { 'insecure-skip-tls-verify': true, 'tls-server-name': 'kubernetes.default' })),
    ]);
    expect(kc.tls).toMatchObject({ rejectUnauthorized: false, servername: 'kubernetes.default' });
    expect(kc.info.user).toBeUndefined();
    expect(await kc.headers()).toEqual({});
  });

  it('names the certificate file it cannot read', async () => {
    const msg = await errorOf(resolveKubeconfig([doc(config(undefined, { 'certificate-authority': 'ca.crt' }))]));
    expect(msg).toBe(
      'kubeconfig /nowhere/config: cluster c: cannot read certificate-authority /nowhere/ca.crt (ENOENT)',
    );
  });
});

describe('resolveKubeconfig: users', () => {
  it('token', async () => {
    const kc = await resolveKubeconfig([doc(config({ token: 's3cret-token' }))]);
    expect(await kc.headers()).toEqual({ Authorization: 'Bearer s3cret-token' });
    expect(kc.info.auth).toEqual(['token']);
  });

  it('tokenFile, relative to the kubeconfig, read again on every refresh (tokens rotate)', async () => {
    const d = dir('token-file', { token: 'first\n' });
    const kc = await resolveKubeconfig([doc(config({ tokenFile: 'token' }), join(d, 'config'))]);
    expect(await kc.headers()).toEqual({ Authorization: 'Bearer first' });
    writeFileSync(join(d, 'token'), 'second');
    expect(await kc.headers()).toEqual({ Authorization: 'Bearer second' });
    // a token file swapped out for a moment keeps the last token instead of failing requests
    rmSync(join(d, 'token'));
    expect(await kc.headers()).toEqual({ Authorization: 'Bearer second' });
    expect(kc.info.auth).toEqual(['token-file']);
  });

  it('a tokenFile that cannot be read at load is an error naming the file', async () => {
    const msg = await errorOf(resolveKubeconfig([doc(config({ tokenFile: '/no/token' }))]));
    expect(msg).toBe('kubeconfig /nowhere/config: user u: cannot read token file /no/token (ENOENT)');
  });

  it('basic auth', async () => {
    const kc = await resolveKubeconfig([doc(config({ username: 'admin', password: 'hunter2' }))]);
    expect(await kc.headers()).toEqual({ Authorization: `Basic ${b64('admin:hunter2')}` });
  });

  it('`as` impersonates on every request, with groups, uid and extras', async () => {
    const kc = await resolveKubeconfig([
      doc(
        config({
          token: 's3cret-token',
          as: 'system:serviceaccount:ns:sa',
          'as-groups': ['g1', 'g2'],
          'as-uid': '1234',
          'as-user-extra': { 'example.com/team': ['a'] },
        }),
      ),
    ]);
    expect(await kc.headers()).toEqual({
      Authorization: 'Bearer s3cret-token',
      'Impersonate-User': 'system:serviceaccount:ns:sa',
      'Impersonate-Group': ['g1', 'g2'],
      'Impersonate-Uid': '1234',
      'Impersonate-Extra-example.com%2Fteam': ['a'],
    });
    expect(kc.info.impersonate).toBe('system:serviceaccount:ns:sa');
  });

  it('an exec user is delegated to client-node, which runs the plugin', async () => {
    const credential = {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'from-exec' },
    };
    const kc = await resolveKubeconfig([
      doc(
        config({
          exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'echo', args: [JSON.stringify(credential)] },
          as: 'someone',
        }),
      ),
    ]);
    expect(kc.info.auth).toEqual(['exec']);
    expect(await kc.headers()).toEqual({ Authorization: 'Bearer from-exec', 'Impersonate-User': 'someone' });
  });

  it('a failing exec plugin names the user', async () => {
    const msg = await errorOf(resolveKubeconfig([doc(config({ exec: { command: 'false' } }))]));
    expect(msg).toMatch(/^kubeconfig \/nowhere\/config: user u: exec plugin failed/);
  });
});

describe('resolveKubeconfig: errors name the file and what is missing, never a secret', () => {
  const secretUser = {
    token: 's3cret-token',
    'client-certificate-data': b64(CERT),
    'client-key-data': b64(KEY),
  };
  const cases: [string, unknown, string][] = [
    ['no current-context', { ...config(secretUser), 'current-context': undefined }, 'no current-context is set'],
    [
      'current context not defined',
      { ...config(secretUser), 'current-context': 'other' },
      'current-context other is not defined',
    ],
    [
      'cluster not defined',
      { ...config(secretUser), clusters: [] },
      'context ctx names cluster c, which is not defined',
    ],
    ['user not defined', { ...config(secretUser), users: [] }, 'context ctx names user u, which is not defined'],
    [
      'cluster without a server',
      { ...config(secretUser), clusters: [{ name: 'c', cluster: {} }] },
      'cluster c: server is missing',
    ],
    ['token of the wrong type', config({ ...secretUser, token: 42 }), 'user u: token must be string'],
    [
      'two ways to authenticate',
      config({ ...secretUser, username: 'admin', password: 'hunter2' }),
      'user u: more than one way to authenticate (token, username/password); keep one',
    ],
    ['password without a user name', config({ password: 'hunter2' }), 'user u: has a username or a password, not both'],
    [
      'a key without a certificate',
      config({ 'client-key-data': b64(KEY) }),
      'user u: has a client key but no certificate',
    ],
  ];
  for (const [name, data, want] of cases) {
    it(name, async () => {
      const msg = await errorOf(resolveKubeconfig([doc(data, '/x')]));
      expect(msg).toBe(`kubeconfig /x: ${want}`);
      for (const s of SECRETS) expect(msg).not.toContain(s);
    });
  }

  it('a YAML error says where, without quoting the line (it may hold a token)', async () => {
    const d = dir('bad-yaml', { config: 'users:\n- name: u\n  user:\n    token: "s3cret-token\n' });
    const msg = await errorOf(loadKubeconfig({ path: join(d, 'config'), env: {} }));
    expect(msg).toMatch(
      new RegExp(`^kubeconfig ${join(d, 'config')}: not valid YAML \\(\\w+ at line \\d+, column \\d+\\)$`),
    );
    expect(msg).not.toContain('s3cret');
  });

  it('a missing explicit file', async () => {
    expect(await errorOf(loadKubeconfig({ path: '/no/such/kubeconfig', env: {} }))).toBe(
      'kubeconfig /no/such/kubeconfig: cannot read it (ENOENT)',
    );
  });
});

describe('loadKubeconfig: where it looks', () => {
  it('merges $KUBECONFIG files as kubectl does: first definition and first current-context win', async () => {
    const a = dir('merge-a', {
      config: stringify({
        clusters: [{ name: 'c', cluster: { server: 'https://a:6443', 'certificate-authority': 'ca.crt' } }],
        users: [{ name: 'u', user: { token: 'token-a' } }],
        contexts: [{ name: 'ctx-b', context: { cluster: 'c', user: 'u', namespace: 'from-a' } }],
      }),
      'ca.crt': CA,
    });
    const b = dir('merge-b', {
      config: stringify({
        clusters: [
          { name: 'c', cluster: { server: 'https://b:6443' } },
          { name: 'only-b', cluster: { server: 'https://only-b:6443' } },
        ],
        users: [{ name: 'u', user: { token: 'token-b' } }],
        contexts: [{ name: 'ctx-b', context: { cluster: 'only-b', user: 'u' } }],
        'current-context': 'ctx-b',
      }),
    });
    const c = dir('merge-c', { config: stringify({ 'current-context': 'ignored' }) });
    const env = {
      KUBECONFIG: [join(a, 'config'), join(tmp, 'missing'), join(b, 'config'), join(c, 'config')].join(':'),
    };
    const kc = await loadKubeconfig({ env, inClusterDir: join(tmp, 'none') });
    // current-context from b (a sets none), context ctx-b from a (a comes first), cluster c and user from a
    expect(kc.info).toMatchObject({ context: 'ctx-b', server: 'https://a:6443', namespace: 'from-a' });
    // relative paths resolve against the file that holds them
    expect(kc.tls.ca?.toString()).toBe(CA);
    expect(await kc.headers()).toEqual({ Authorization: 'Bearer token-a' });
  });

  it('$KUBECONFIG naming no existing file is an error', async () => {
    const msg = await errorOf(loadKubeconfig({ env: { KUBECONFIG: '/no/a:/no/b' } }));
    expect(msg).toBe('$KUBECONFIG names no file that exists (/no/a, /no/b)');
  });

  it('~/.kube/config when $KUBECONFIG is unset', async () => {
    const home = dir('home', {});
    dir('home/.kube', { config: stringify(config({ token: 'home-token' })) });
    const kc = await loadKubeconfig({ env: { HOME: home }, inClusterDir: join(tmp, 'none') });
    expect(kc.info.source).toBe(join(home, '.kube', 'config'));
  });

  it('in-cluster: service host and port from the environment, token, CA and namespace from the directory', async () => {
    const sa = dir('serviceaccount', { token: 'sa-token-1\n', 'ca.crt': CA, namespace: 'packagesync-system\n' });
    const env = { HOME: dir('empty-home', {}), KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
    const kc = await loadKubeconfig({ env, inClusterDir: sa });
    expect(kc.info).toMatchObject({ server: 'https://10.96.0.1:443', namespace: 'packagesync-system' });
    expect(kc.tls.ca?.toString()).toBe(CA);
    expect(await kc.headers()).toEqual({ Authorization: 'Bearer sa-token-1' });
    writeFileSync(join(sa, 'token'), 'sa-token-2');
    expect(await kc.headers()).toEqual({ Authorization: 'Bearer sa-token-2' });
  });

  it('in-cluster: an IPv6 service host is bracketed', async () => {
    const sa = dir('serviceaccount-v6', { token: 't' });
    const env = { HOME: dir('empty-home', {}), KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' };
    expect((await loadKubeconfig({ env, inClusterDir: sa })).info.server).toBe('https://[fd00::1]:443');
  });

  it('in-cluster without the service environment is an error', async () => {
    const sa = dir('serviceaccount-noenv', { token: 't' });
    const msg = await errorOf(loadKubeconfig({ env: { HOME: dir('empty-home', {}) }, inClusterDir: sa }));
    expect(msg).toBe(`in-cluster config (${sa}): KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set`);
  });

  it('nothing at all is an error that says where it looked', async () => {
    const home = dir('empty-home', {});
    const msg = await errorOf(loadKubeconfig({ env: { HOME: home }, inClusterDir: join(tmp, 'none') }));
    expect(msg).toContain(join(home, '.kube', 'config'));
    expect(msg).toContain(join(tmp, 'none', 'token'));
  });
});
