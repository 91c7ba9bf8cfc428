import { createHmac, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import type { SourceURL } from './validate.ts';

/**
 * Turns auth material from a Secret into what git needs, without a secret ever touching a command line, a URL
 * or an environment variable: everything lands in 0600 files inside the operation's private 0700 directory,
 * which the caller deletes when the git operation ends.
 *  - username/password: a GIT_ASKPASS script that `cat`s the 0600 username/password files;
 *  - bearerToken: an `http.<url>.extraHeader` in $HOME/.gitconfig (0600), scoped to the source URL;
 *  - identity + knownHosts: 0600 key and known_hosts files, and a GIT_SSH_COMMAND that pins them;
 *  - ca.crt (with any https kind, or alone): a CA bundle file that git trusts instead of the system's, for
 *    servers behind a private CA (Flux's GitRepository reads the same key).
 * No other credential source is reachable (clean HOME, no system config, no agent, IdentitiesOnly), so a
 * failing credential never falls back to anonymous access or to some other identity.
 */

export type GitCredentials =
  { username: string; password: string } | { bearerToken: string } | { identity: string; knownHosts: string };

/** Credentials, a CA bundle for https, or both. */
export type GitAuth = (GitCredentials | { anonymous: true }) & { caCert?: string };

export interface AuthMaterial {
  /** Variables to add to git's environment (paths only, never values of secrets). */
  env: Record<string, string>;
  /** Every secret value, for scrubbing messages. */
  secrets: string[];
}

const invalidSecret = (why: string): Result<never> => fail(Reason.InvalidAuthSecret, why, { terminal: true });

/**
 * Writes the material for one git operation. `opDir` is the operation's private directory (0700) and `home`
 * the empty HOME inside it.
 */
export async function writeAuthMaterial(
  auth: GitAuth | undefined,
  source: SourceURL,
  opDir: string,
  home: string,
): Promise<Result<AuthMaterial>> {
  const isSsh = source.transport === 'ssh';
  if (auth === undefined || 'anonymous' in auth) {
    if (isSsh) return invalidSecret('ssh sources need a secretRef with keys identity and known_hosts');
    return withCa(auth?.caCert, source, opDir, ok({ env: {}, secrets: [] }));
  }
  if ('identity' in auth) {
    if (!isSsh) return invalidSecret(`the secret holds an ssh identity but the URL uses ${source.transport}`);
    if (auth.caCert !== undefined) return invalidSecret('ca.crt is for https sources; ssh pins the host key instead');
    return writeSshMaterial(auth, opDir);
  }
  if (isSsh) return invalidSecret('ssh sources need identity and known_hosts in the secret, not a password or token');
  if ('bearerToken' in auth)
    return withCa(auth.caCert, source, opDir, await writeBearerMaterial(auth.bearerToken, source, home));
  return withCa(auth.caCert, source, opDir, await writeBasicMaterial(auth, opDir));
}

/**
 * Adds the CA bundle: git verifies the server against it alone (GIT_SSL_CAINFO), not the system's CAs. Not
 * secret (a certificate), but it lives with the rest of the operation's material and goes with it.
 */
async function withCa(
  caCert: string | undefined,
  source: SourceURL,
  opDir: string,
  material: Result<AuthMaterial>,
): Promise<Result<AuthMaterial>> {
  if (caCert === undefined || !material.ok) return material;
  if (source.transport !== 'https')
    return invalidSecret(`ca.crt is for https sources, but the URL uses ${source.transport}`);
  if (!/-----BEGIN CERTIFICATE-----/.test(caCert)) return invalidSecret('ca.crt is not a PEM certificate (bundle)');
  const file = join(opDir, 'ca.crt');
  await writeFile(file, caCert.endsWith('\n') ? caCert : `${caCert}\n`, { mode: 0o600 });
  return ok({ ...material.value, env: { ...material.value.env, GIT_SSL_CAINFO: file } });
}

async function writeBasicMaterial(
  auth: { username: string; password: string },
  opDir: string,
): Promise<Result<AuthMaterial>> {
  // git's askpass reader stops at the first newline, so such values cannot work; say so instead of failing later.
  if (auth.username === '' || /[\r\n\0]/.test(auth.username))
    return invalidSecret('username is empty or contains a line break');
  if (auth.password === '' || /[\r\n\0]/.test(auth.password))
    return invalidSecret('password is empty or contains a line break');
  const userFile = join(opDir, 'username');
  const passFile = join(opDir, 'password');
  const askpass = join(opDir, 'askpass.sh');
  await writeFile(userFile, auth.username, { mode: 0o600 });
  await writeFile(passFile, auth.password, { mode: 0o600 });
  // git runs the helper with the prompt ("Username for '…': " or "Password for '…': ") as its only argument.
  const script = [
    '#!/bin/sh',
    'case "$1" in',
    `  Username*) exec cat ${shellQuote(userFile)} ;;`,
    `  *) exec cat ${shellQuote(passFile)} ;;`,
    'esac',
    '',
  ].join('\n');
  await writeFile(askpass, script, { mode: 0o700 });
  await chmod(askpass, 0o700);
  const basic = Buffer.from(`${auth.username}:${auth.password}`).toString('base64');
  return ok({ env: { GIT_ASKPASS: askpass }, secrets: [auth.password, basic] });
}

async function writeBearerMaterial(token: string, source: SourceURL, home: string): Promise<Result<AuthMaterial>> {
  // A line break would let the token inject further headers or config lines.
  if (token === '' || /[\r\n\0]/.test(token)) return invalidSecret('bearerToken is empty or contains a line break');
  // Only requests to the source URL carry it: with credentials git follows no redirect (git-command.ts).
  const config = `[http ${configQuote(source.url)}]\n\textraHeader = ${configQuote(`Authorization: Bearer ${token}`)}\n`;
  await mkdir(home, { recursive: true, mode: 0o700 });
  await writeFile(join(home, '.gitconfig'), config, { mode: 0o600 });
  return ok({ env: {}, secrets: [token] });
}

async function writeSshMaterial(
  auth: { identity: string; knownHosts: string },
  opDir: string,
): Promise<Result<AuthMaterial>> {
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(auth.identity)) {
    return invalidSecret('identity is not a PEM or OpenSSH private key');
  }
  if (!auth.knownHosts.split('\n').some((l) => l.trim() !== '' && !l.trim().startsWith('#'))) {
    return invalidSecret('known_hosts is empty: ssh sources need the server host key to be pinned');
  }
  const keyFile = join(opDir, 'identity');
  const knownHostsFile = join(opDir, 'known_hosts');
  // OpenSSH rejects a key file without its final newline ("invalid format").
  await writeFile(keyFile, auth.identity.endsWith('\n') ? auth.identity : `${auth.identity}\n`, { mode: 0o600 });
  await writeFile(knownHostsFile, auth.knownHosts.endsWith('\n') ? auth.knownHosts : `${auth.knownHosts}\n`, {
    mode: 0o600,
  });
  return ok({ env: { GIT_SSH_COMMAND: sshCommand(keyFile, knownHostsFile) }, secrets: [auth.identity.trim()] });
}

/**
 * The ssh command git runs (through sh). `-F /dev/null` ignores every ssh_config; no agent; only this key;
 * only these host keys; never prompt.
 */
export function sshCommand(keyFile: string, knownHostsFile: string): string {
  return [
    'ssh',
    '-F /dev/null',
    `-i ${shellQuote(keyFile)}`,
    '-o IdentitiesOnly=yes',
    '-o IdentityAgent=none',
    `-o UserKnownHostsFile=${shellQuote(knownHostsFile)}`,
    '-o GlobalKnownHostsFile=/dev/null',
    '-o StrictHostKeyChecking=yes',
    '-o UpdateHostKeys=no',
    '-o BatchMode=yes',
    '-o PasswordAuthentication=no',
    '-o KbdInteractiveAuthentication=no',
    '-o ConnectTimeout=30',
    '-o LogLevel=ERROR',
  ].join(' ');
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A git config value or subsection in double quotes, with the escapes git's config parser understands. */
function configQuote(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * A stable, non-reversible name for a credential: HMAC-SHA256 under a per-cache key (a 0600 file that
 * never leaves the cache root), so a directory name cannot be brute-forced back to a weak password.
 * "anonymous" without auth.
 */
export function credentialFingerprint(auth: GitAuth | undefined, hmacKey: Buffer): string {
  // The CA is not part of it: it decides whether a server is trusted, not what a credential may read, and a
  // commit id names the same tree wherever it was fetched from.
  if (auth === undefined || 'anonymous' in auth) return 'anonymous';
  const parts =
    'identity' in auth
      ? ['ssh', auth.identity, auth.knownHosts]
      : 'bearerToken' in auth
        ? ['bearer', auth.bearerToken]
        : ['basic', auth.username, auth.password];
  return createHmac('sha256', hmacKey).update(parts.join('\0')).digest('hex');
}

/** The HMAC key for credential fingerprints: created once (0600) under the cache root, then reused. */
export async function loadFingerprintKey(cacheRoot: string): Promise<Buffer> {
  const file = join(cacheRoot, '.fingerprint-key');
  await mkdir(cacheRoot, { recursive: true });
  try {
    return await readFile(file);
  } catch {
    const key = randomBytes(32);
    try {
      await writeFile(file, key, { mode: 0o600, flag: 'wx' });
      return key;
    } catch {
      return readFile(file); // another process created it first
    }
  }
}

/**
 * Reads auth material from a Secret's decoded data: `username` + `password`, or `bearerToken`, or
 * `identity` + `known_hosts`; at most one kind, plus `ca.crt` for https servers behind a private CA. One
 * trailing line break on username, password and token is dropped (files written with `echo` carry one).
 * Messages name keys, never values.
 */
export function authFromSecret(data: Record<string, string> | undefined): Result<GitAuth | undefined> {
  if (data === undefined) return ok(undefined);
  const credentials = credentialsFromSecret(data);
  if (!credentials.ok) return credentials;
  const caCert = typeof data['ca.crt'] === 'string' && data['ca.crt'] !== '' ? data['ca.crt'] : undefined;
  if (credentials.value === undefined) {
    if (caCert !== undefined) return ok({ anonymous: true, caCert });
    return invalidSecret(
      'the secret has none of the keys username/password, bearerToken, identity/known_hosts, ca.crt',
    );
  }
  return ok(caCert === undefined ? credentials.value : { ...credentials.value, caCert });
}

function credentialsFromSecret(data: Record<string, string>): Result<GitCredentials | undefined> {
  const has = (k: string): boolean => typeof data[k] === 'string' && data[k] !== '';
  const chomp = (k: string): string => (data[k] ?? '').replace(/\r?\n$/, '');
  const kinds = [has('username') || has('password'), has('bearerToken'), has('identity') || has('known_hosts')];
  if (kinds.filter(Boolean).length > 1) {
    return invalidSecret(
      'the secret mixes auth kinds; use only username/password, or bearerToken, or identity/known_hosts',
    );
  }
  if (kinds[0]) {
    if (!has('username') || !has('password')) return invalidSecret('the secret needs both username and password');
    return ok({ username: chomp('username'), password: chomp('password') });
  }
  if (kinds[1]) return ok({ bearerToken: chomp('bearerToken') });
  if (kinds[2]) {
    if (!has('identity') || !has('known_hosts')) return invalidSecret('the secret needs both identity and known_hosts');
    return ok({ identity: data.identity as string, knownHosts: data.known_hosts as string });
  }
  return ok(undefined);
}
