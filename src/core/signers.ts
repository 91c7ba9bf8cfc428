/**
 * The pure half of spec.source.verify: which keys a verification Secret allows, named the way a user can
 * compare them with `gpg --fingerprint` and `ssh-keygen -lf`, and what a git signature check said. Key
 * material never appears in a message: only fingerprints and key ids, which are public.
 */
import { createHash } from 'node:crypto';

/** The Secret key holding SSH allowed signers (git's gpg.ssh.allowedSignersFile format). */
export const ALLOWED_SIGNERS_KEY = 'allowed_signers';

export interface AllowedKeys {
  /** ASCII-armored GPG public keys (every key of the Secret but allowed_signers, as Flux reads them all). */
  gpg: string[];
  /** The allowed signers file, as written. */
  allowedSigners: string;
  /** SHA256:… fingerprints of the SSH keys it allows, for messages. */
  sshFingerprints: string[];
}

export function allowedKeys(data: Record<string, string>): AllowedKeys {
  const gpg = Object.entries(data)
    .filter(([k, v]) => k !== ALLOWED_SIGNERS_KEY && v.includes('-----BEGIN PGP PUBLIC KEY BLOCK-----'))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, v]) => v);
  const allowedSigners = data[ALLOWED_SIGNERS_KEY] ?? '';
  return { gpg, allowedSigners, sshFingerprints: sshFingerprints(allowedSigners) };
}

const SSH_KEY_TYPE =
  /^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)$/;

/**
 * The fingerprints (as ssh-keygen -l prints them) of every key of an allowed signers file:
 * `principals [options] keytype base64-key [comment]`, options possibly quoted.
 */
export function sshFingerprints(allowedSigners: string): string[] {
  const out: string[] = [];
  for (const raw of allowedSigners.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const fields = line.split(/\s+/);
    const at = fields.findIndex((f) => SSH_KEY_TYPE.test(f));
    const blob = at >= 0 ? fields[at + 1] : undefined;
    if (!blob || !/^[A-Za-z0-9+/]+=*$/.test(blob)) continue;
    const digest = createHash('sha256').update(Buffer.from(blob, 'base64')).digest('base64');
    out.push(`SHA256:${digest.replace(/=+$/, '')}`);
  }
  return out;
}

/** The signature a commit or tag object carries, by its armor. */
export function signatureKind(object: string): 'ssh' | 'gpg' | 'x509' | undefined {
  if (object.includes('-----BEGIN SSH SIGNATURE-----')) return 'ssh';
  if (object.includes('-----BEGIN PGP SIGNATURE-----')) return 'gpg';
  if (object.includes('-----BEGIN SIGNED MESSAGE-----')) return 'x509';
  return undefined;
}

/**
 * Who signed, from `git verify-commit --raw` / `verify-tag --raw` output: an SSH key fingerprint, or the
 * GPG key id gpg reported (good or not); undefined when the output names none.
 */
export function signerOf(output: string): string | undefined {
  const ssh = /\bkey (SHA256:[A-Za-z0-9+/]+)/.exec(output);
  if (ssh) return ssh[1];
  const gpg = /\[GNUPG:\] (?:VALIDSIG|GOODSIG|BADSIG|EXPKEYSIG|REVKEYSIG|ERRSIG|NO_PUBKEY) ([0-9A-F]{16,40})/.exec(
    output,
  );
  return gpg?.[1];
}

/** The allowed keys, listed for a message: GPG fingerprints and SSH fingerprints. */
export function describeAllowed(gpgFingerprints: readonly string[], ssh: readonly string[]): string {
  const all = [...gpgFingerprints.map((f) => `GPG ${f}`), ...ssh.map((f) => `SSH ${f}`)];
  return all.length === 0 ? 'none' : all.join(', ');
}
