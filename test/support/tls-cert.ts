/**
 * Test certificates: one place that knows the openssl argv for a throwaway self-signed certificate, so the
 * registry's CA, the token server's signing certificate and the git server's CA cannot drift apart (key size,
 * lifetime, flags).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export interface CertFiles {
  /** PEM private key (unencrypted). */
  keyPath: string;
  /** PEM certificate. */
  certPath: string;
}

/**
 * A self-signed RSA certificate valid for two days, written to `<dir>/<name>.key` and `<dir>/<name>.crt`.
 * `extensions` are passed as `-addext` values (e.g. `basicConstraints=critical,CA:TRUE`).
 */
export function selfSignedCert(dir: string, name: string, commonName: string, extensions: string[] = []): CertFiles {
  const keyPath = join(dir, `${name}.key`);
  const certPath = join(dir, `${name}.crt`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '2',
      '-subj',
      `/CN=${commonName}`,
      ...extensions.flatMap((e) => ['-addext', e]),
    ],
    { stdio: 'ignore' },
  );
  return { keyPath, certPath };
}
