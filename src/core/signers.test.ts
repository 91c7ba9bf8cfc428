import { describe, expect, it } from 'vitest';
import { allowedKeys, describeAllowed, signatureKind, signerOf, sshFingerprints } from './signers.ts';

// an ed25519 public key and the fingerprint `ssh-keygen -lf` prints for it
const PUB = 'AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl';

describe('sshFingerprints', () => {
  it('reads principals, options, key type and key of each line; skips comments and junk', () => {
    const text = [
      '# team',
      `alice@example.com ssh-ed25519 ${PUB} laptop`,
      `bob@example.com,carol@example.com namespaces="git" ssh-ed25519 ${PUB}`,
      'not a key line',
      '',
    ].join('\n');
    const fps = sshFingerprints(text);
    expect(fps).toHaveLength(2);
    expect(fps[0]).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(fps[1]).toBe(fps[0]);
  });
});

describe('allowedKeys', () => {
  it('takes allowed_signers for SSH and every armored public key for GPG', () => {
    const armored = '-----BEGIN PGP PUBLIC KEY BLOCK-----\n…\n-----END PGP PUBLIC KEY BLOCK-----\n';
    const k = allowedKeys({ 'b.asc': armored, allowed_signers: `a ssh-ed25519 ${PUB}`, note: 'hello' });
    expect(k.gpg).toEqual([armored]);
    expect(k.sshFingerprints).toHaveLength(1);
  });
});

describe('signatures', () => {
  it.each([
    ['tree x\ngpgsig -----BEGIN SSH SIGNATURE-----\n …', 'ssh'],
    ['tree x\ngpgsig -----BEGIN PGP SIGNATURE-----\n …', 'gpg'],
    ['object x\n\nmsg\n-----BEGIN PGP SIGNATURE-----\n', 'gpg'],
    ['tree x\nauthor a\n\nmsg', undefined],
  ])('%j → %s', (object, kind) => expect(signatureKind(object)).toBe(kind));

  it.each([
    ['Good "git" signature with ED25519 key SHA256:abc+/DEF\nNo principal matched.', 'SHA256:abc+/DEF'],
    ['[GNUPG:] NEWSIG\n[GNUPG:] ERRSIG 0123456789ABCDEF 22 10 00 1700000000 9 -', '0123456789ABCDEF'],
    ['[GNUPG:] NO_PUBKEY 0123456789ABCDEF', '0123456789ABCDEF'],
    ['error: no signature found', undefined],
  ])('signer of %j → %s', (output, signer) => expect(signerOf(output)).toBe(signer));

  it('lists the allowed keys', () => {
    expect(describeAllowed(['ABCD'], ['SHA256:x'])).toBe('GPG ABCD, SSH SHA256:x');
    expect(describeAllowed([], [])).toBe('none');
  });
});
