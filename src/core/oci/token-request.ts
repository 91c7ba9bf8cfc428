import type { RegistryAuth } from './credentials.ts';

/**
 * How to ask a registry's token server (the realm of a `WWW-Authenticate: Bearer` challenge) for a token, as
 * docker and containerd ask it:
 * - with an identity token (`identitytoken` of a docker config: `docker login` to a token server, ACR's and
 *   other OAuth refresh tokens): a POST of the OAuth2 `refresh_token` grant, the token in the form body;
 * - else a GET of `?service=…&scope=…`, with Basic credentials when there are any (anonymous otherwise).
 * The scope is the challenge's (distribution names the repository and the actions the request needs), or pull
 * of the repository when the challenge names none.
 */
export interface TokenRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export const TOKEN_CLIENT_ID = 'packagesync';

export function tokenRequest(
  challenge: { realm: string; service?: string; scope?: string },
  repository: string,
  auth: RegistryAuth | undefined,
): TokenRequest {
  const url = new URL(challenge.realm);
  const scope = challenge.scope ?? `repository:${repository}:pull`;
  if (auth?.identityToken !== undefined) {
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: auth.identityToken,
      client_id: TOKEN_CLIENT_ID,
      ...(challenge.service !== undefined ? { service: challenge.service } : {}),
      scope,
    });
    return {
      method: 'POST',
      url: url.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    };
  }
  if (challenge.service !== undefined) url.searchParams.set('service', challenge.service);
  url.searchParams.set('scope', scope);
  const headers: Record<string, string> =
    auth?.username !== undefined
      ? { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password ?? ''}`).toString('base64')}` }
      : {};
  return { method: 'GET', url: url.toString(), headers };
}
