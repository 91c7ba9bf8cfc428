/**
 * An https git server behind a private CA: the Secret's `ca.crt` (Flux's key) is what git trusts, alone or
 * with credentials; without it the server is refused, and a ca.crt that is not a certificate is a clear
 * InvalidAuthSecret. The server is the real smart-HTTP one, serving TLS with a certificate our test CA signed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reason } from '../../src/api/reasons.ts';
import { authFromSecret, createGitFetcher, type GitFetcher } from '../../src/adapters/git/index.ts';
import { startGitFixture, type GitFixture, type GitHttpServer } from '../support/git/index.ts';
import { selfSignedCert } from '../support/tls-cert.ts';

const run = promisify(execFile);
let dir: string;
let ca: string;
let otherCa: string;
let repos: GitFixture;
let head: string;
let open: GitHttpServer;
let basic: GitHttpServer;
let fetcher: GitFetcher;

/** A CA (cert + key) in `dir`, named `name`. */
async function makeCa(name: string): Promise<string> {
  return readFile(selfSignedCert(dir, name, name).certPath, 'utf8');
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'psync-ca-'));
  ca = await makeCa('test-ca');
  otherCa = await makeCa('other-ca');
  // the server's certificate, for 127.0.0.1, signed by test-ca
  await writeFile(join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  await run('openssl', [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    join(dir, 'server.key'),
    '-out',
    join(dir, 'server.csr'),
  ]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    join(dir, 'server.csr'),
    '-CA',
    join(dir, 'test-ca.crt'),
    '-CAkey',
    join(dir, 'test-ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    join(dir, 'san.cnf'),
    '-out',
    join(dir, 'server.crt'),
  ]);
  const tls = {
    cert: await readFile(join(dir, 'server.crt'), 'utf8'),
    key: await readFile(join(dir, 'server.key'), 'utf8'),
  };
  repos = await startGitFixture();
  head = (await repos.repoWith('web', { 'app.yaml': 'kind: ConfigMap\n' })).sha;
  open = await repos.serveHttp('none', tls);
  basic = await repos.serveHttp({ username: 'alice', password: 's3cret-pw' }, tls);
  fetcher = createGitFetcher({ cacheRoot: repos.cacheRoot, timeoutMs: 20_000 });
});

afterAll(async () => {
  await repos?.dispose();
  await rm(dir, { recursive: true, force: true });
});

const auth = (data: Record<string, string>) => {
  const a = authFromSecret(data);
  if (!a.ok) throw new Error(a.failure.message);
  return a.value;
};

describe('https with a private CA (ca.crt)', () => {
  it('resolves and fetches when ca.crt alone is the secret', async () => {
    const resolved = await fetcher.resolveRef(open.url('web'), { branch: 'main' }, auth({ 'ca.crt': ca }));
    expect(resolved).toMatchObject({ ok: true, value: { commit: head } });
    const checkout = await fetcher.fetchRevision(open.url('web'), head, auth({ 'ca.crt': ca }));
    expect(checkout.ok).toBe(true);
  });

  it('works together with a user name and password', async () => {
    const secret = { username: 'alice', password: 's3cret-pw', 'ca.crt': ca };
    const resolved = await fetcher.resolveRef(basic.url('web'), { branch: 'main' }, auth(secret));
    expect(resolved).toMatchObject({ ok: true, value: { commit: head } });
  });

  it('refuses the server without the CA, or with another CA, naming neither key nor certificate', async () => {
    for (const a of [undefined, auth({ 'ca.crt': otherCa })]) {
      const resolved = await fetcher.resolveRef(open.url('web'), { branch: 'main' }, a);
      expect(resolved.ok).toBe(false);
      if (resolved.ok) continue;
      expect(resolved.failure.reason).toBe(Reason.FetchFailed);
      expect(resolved.failure.message).toMatch(/certificate/i);
      expect(resolved.failure.message).not.toContain('BEGIN CERTIFICATE');
    }
  });

  it('a ca.crt that is no certificate, or on an ssh source, is InvalidAuthSecret', async () => {
    const resolved = await fetcher.resolveRef(open.url('web'), { branch: 'main' }, auth({ 'ca.crt': 'not a cert' }));
    expect(resolved).toMatchObject({ ok: false, failure: { reason: Reason.InvalidAuthSecret } });
    expect(!resolved.ok && resolved.failure.message).toBe('ca.crt is not a PEM certificate (bundle)');
    const key = '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n';
    const ssh = auth({ identity: key, known_hosts: '[127.0.0.1]:2222 ssh-ed25519 AAAA', 'ca.crt': ca });
    const overSsh = await fetcher.resolveRef('ssh://git@127.0.0.1:2222/web.git', { branch: 'main' }, ssh);
    expect(overSsh).toMatchObject({ ok: false, failure: { reason: Reason.InvalidAuthSecret } });
    expect(!overSsh.ok && overSsh.failure.message).toContain('ca.crt is for https sources');
  });
});
