import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';

/**
 * Registry credentials from the Secret named by spec.source.oci.secretRef, as Flux's OCIRepository reads it:
 * a `kubernetes.io/dockerconfigjson` Secret (key `.dockerconfigjson`, the entry for the registry's host), or
 * keys `username` and `password`. `ca.crt` (in that Secret, or in the one certSecretRef names) is the CA the
 * registry's TLS certificate must chain to. Messages name keys and hosts, never values.
 */
export interface RegistryAuth {
  username?: string;
  password?: string;
  /** An identity token (docker login to a token server): sent as the refresh token. */
  identityToken?: string;
  caCert?: string;
}

const invalid = (secret: string, why: string) =>
  fail<never>(Reason.InvalidAuthSecret, `Secret ${secret} ${why}`, { terminal: true });

/** The auths entry for `host`: exact host, then `https://host`, then `host/…` forms docker config files use. */
function entryFor(auths: Record<string, unknown>, host: string): Record<string, unknown> | undefined {
  for (const [key, value] of Object.entries(auths)) {
    const bare = key
      .replace(/^https?:\/\//, '')
      .replace(/\/.*$/, '')
      .toLowerCase();
    if (bare === host && typeof value === 'object' && value !== null) return value as Record<string, unknown>;
  }
  return undefined;
}

export function registryAuthFromSecret(
  data: Record<string, string> | undefined,
  host: string,
  secret: string,
  caCert?: string,
): Result<RegistryAuth | undefined> {
  const ca = caCert ?? nonEmpty(data?.['ca.crt']);
  if (ca !== undefined && !/-----BEGIN CERTIFICATE-----/.test(ca))
    return invalid(secret, 'has a ca.crt that is not a PEM certificate');
  const withCa = (auth: RegistryAuth): RegistryAuth => (ca === undefined ? auth : { ...auth, caCert: ca });
  if (!data) return ok(ca === undefined ? undefined : { caCert: ca });
  const config = nonEmpty(data['.dockerconfigjson']);
  if (config !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(config);
    } catch {
      return invalid(secret, 'has a .dockerconfigjson that is not JSON');
    }
    const auths = (parsed as { auths?: unknown } | null)?.auths;
    if (typeof auths !== 'object' || auths === null) return invalid(secret, 'has a .dockerconfigjson without "auths"');
    const entry = entryFor(auths as Record<string, unknown>, host);
    if (!entry)
      return invalid(
        secret,
        `has no .dockerconfigjson auths entry for ${host}: add one (kubectl create secret docker-registry --docker-server=${host})`,
      );
    let username = typeof entry.username === 'string' ? entry.username : undefined;
    let password = typeof entry.password === 'string' ? entry.password : undefined;
    if (typeof entry.auth === 'string' && entry.auth !== '') {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon <= 0)
        return invalid(secret, `has a .dockerconfigjson auth for ${host} that is not base64 of user:password`);
      username = decoded.slice(0, colon);
      password = decoded.slice(colon + 1);
    }
    const identityToken =
      typeof entry.identitytoken === 'string' && entry.identitytoken !== '' ? entry.identitytoken : undefined;
    if (username === undefined && identityToken === undefined) {
      return invalid(
        secret,
        `has a .dockerconfigjson entry for ${host} with neither auth, username/password nor identitytoken`,
      );
    }
    return ok(
      withCa({
        ...(username !== undefined ? { username, password: password ?? '' } : {}),
        ...(identityToken ? { identityToken } : {}),
      }),
    );
  }
  const username = nonEmpty(data.username);
  const password = data.password;
  if (username !== undefined) {
    if (password === undefined) return invalid(secret, 'has username but no password');
    return ok(withCa({ username, password }));
  }
  if (ca !== undefined) return ok({ caCert: ca });
  return invalid(secret, 'has none of the keys .dockerconfigjson, username/password, ca.crt');
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}
