import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Reason } from '../../api/reasons.ts';
import { authFromSecret, credentialFingerprint, writeAuthMaterial } from './auth.ts';
import type { SourceURL } from './validate.ts';

const https: SourceURL = { url: 'https://git.example.com/r.git', transport: 'https', host: 'git.example.com' };
const ssh: SourceURL = { url: 'ssh://git@git.example.com/r.git', transport: 'ssh', host: 'git.example.com' };
const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----';

describe('authFromSecret', () => {
  it.each([
    [undefined, undefined],
    [
      { username: 'u', password: 'p\n' },
      { username: 'u', password: 'p' },
    ],
    [{ bearerToken: 't' }, { bearerToken: 't' }],
    [
      { identity: KEY, known_hosts: 'h k v' },
      { identity: KEY, knownHosts: 'h k v' },
    ],
    [
      { bearerToken: 't', 'ca.crt': 'x' },
      { bearerToken: 't', caCert: 'x' },
    ],
    [{ 'ca.crt': 'x' }, { anonymous: true, caCert: 'x' }],
  ])('%j', (data, expected) => {
    expect(authFromSecret(data)).toEqual({ ok: true, value: expected });
  });

  it.each([
    [{}],
    [{ username: 'usr-Q1' }],
    [{ password: 'pw-Q2' }],
    [{ identity: KEY }],
    [{ username: 'usr-Q1', password: 'pw-Q2', bearerToken: 'tok-Q3' }],
  ])('rejects %j without naming values', (data) => {
    const r = authFromSecret(data);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failure.reason).toBe(Reason.InvalidAuthSecret);
      for (const v of Object.values(data)) expect(r.failure.message).not.toContain(v);
    }
  });
});

describe('writeAuthMaterial', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'psync-auth-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const mode = async (p: string): Promise<number> => (await stat(p)).mode & 0o777;

  it('ca.crt: a 0600 bundle file git trusts alone (GIT_SSL_CAINFO), with or without credentials', async () => {
    const cert = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const r = await writeAuthMaterial({ anonymous: true, caCert: cert }, https, dir, join(dir, 'home'));
    expect(r.ok && r.value.env).toEqual({ GIT_SSL_CAINFO: join(dir, 'ca.crt') });
    expect(await readFile(join(dir, 'ca.crt'), 'utf8')).toBe(cert);
    expect(await mode(join(dir, 'ca.crt'))).toBe(0o600);
    const withToken = await writeAuthMaterial({ bearerToken: 't', caCert: cert }, https, dir, join(dir, 'home'));
    expect(withToken.ok && Object.keys(withToken.value.env)).toEqual(['GIT_SSL_CAINFO']);
  });

  it('basic auth: askpass script reads 0600 files; no secret in env', async () => {
    const r = await writeAuthMaterial({ username: 'alice', password: "p'w$(id)" }, https, dir, join(dir, 'home'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(Object.keys(r.value.env)).toEqual(['GIT_ASKPASS']);
    expect(JSON.stringify(r.value.env)).not.toContain("p'w");
    expect(await mode(join(dir, 'password'))).toBe(0o600);
    expect(await mode(join(dir, 'askpass.sh'))).toBe(0o700);
    expect(await readFile(join(dir, 'askpass.sh'), 'utf8')).not.toContain("p'w");
  });

  it('bearer: URL-scoped extraHeader in a 0600 .gitconfig', async () => {
    const home = join(dir, 'home');
    const r = await writeAuthMaterial({ bearerToken: 'tok' }, https, dir, home);
    expect(r.ok && r.value.env).toEqual({});
    expect(await mode(join(home, '.gitconfig'))).toBe(0o600);
    expect(await readFile(join(home, '.gitconfig'), 'utf8')).toContain(`[http "${https.url}"]`);
  });

  it('ssh: 0600 key and known_hosts, pinned by GIT_SSH_COMMAND', async () => {
    const r = await writeAuthMaterial({ identity: KEY, knownHosts: 'h ssh-ed25519 AAAA' }, ssh, dir, join(dir, 'home'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(await mode(join(dir, 'identity'))).toBe(0o600);
    expect(await mode(join(dir, 'known_hosts'))).toBe(0o600);
    const cmd = r.value.env.GIT_SSH_COMMAND ?? '';
    for (const opt of ['IdentitiesOnly=yes', 'StrictHostKeyChecking=yes', 'BatchMode=yes', '-F /dev/null'])
      expect(cmd).toContain(opt);
    expect(cmd).not.toContain('AAAA');
  });

  it.each([
    ['a token with a line break', { bearerToken: 'a\nX-Evil: 1' }, https],
    ['a password with a line break', { username: 'u', password: 'a\nb' }, https],
    ['an identity for an https URL', { identity: KEY, knownHosts: 'h k v' }, https],
    ['a password for an ssh URL', { username: 'u', password: 'p' }, ssh],
    ['an identity that is not a key', { identity: 'hello', knownHosts: 'h k v' }, ssh],
    ['empty known_hosts', { identity: KEY, knownHosts: '# nothing\n' }, ssh],
    ['no auth for ssh', undefined, ssh],
  ] as const)('rejects %s', async (_what, auth, source) => {
    const r = await writeAuthMaterial(auth, source, dir, join(dir, 'home'));
    expect(!r.ok && r.failure.reason).toBe(Reason.InvalidAuthSecret);
  });
});

describe('credentialFingerprint', () => {
  it('is stable per key and differs per credential', () => {
    const k = Buffer.alloc(32, 1);
    const a = credentialFingerprint({ username: 'u', password: 'p' }, k);
    expect(credentialFingerprint({ username: 'u', password: 'p' }, k)).toBe(a);
    expect(credentialFingerprint({ username: 'u', password: 'q' }, k)).not.toBe(a);
    expect(credentialFingerprint(undefined, k)).toBe('anonymous');
    expect(a).not.toContain('p');
  });
});
