/**
 * Who an in-cluster UI request says it is, decided on its headers alone (pure; access.ts then asks the API server
 * whether it believes it). The UI has no users of its own (docs/adr/0039): a request carries a bearer token the
 * API server accepts — in `Authorization: Bearer …` (an auth proxy such as oauth2-proxy passing the user's OIDC ID
 * token, or a script) or in the session cookie the sign-in form sets — and every read and action is sent to the
 * API server with that token, so Kubernetes RBAC decides. A trusted auth proxy may instead name the user and groups
 * in X-Remote-User / X-Remote-Group (the API server's own request-header names), with its own token as the bearer:
 * access.ts honours that only when the token is the identity the operator named with --ui-auth-proxy-identity.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { cookieValue } from './security.ts';

export const SESSION_COOKIE = 'packagesync-ui-session';
export const PROXY_USER_HEADER = 'x-remote-user';
export const PROXY_GROUP_HEADER = 'x-remote-group';

/** Longer than any ServiceAccount or OIDC token seen in practice, short enough to refuse garbage at once. */
const MAX_TOKEN_CHARS = 16_384;
/** A token as JWTs and opaque tokens are written: base64url, base64 and the JWT's dots; nothing a header can break on. */
const TOKEN = /^[A-Za-z0-9._~+/=-]+$/;

export interface Credential {
  token: string;
  /** From a trusted auth proxy's headers: the user and groups to act as (the token is the proxy's). */
  impersonate?: { user: string; groups: string[] };
  /** Where the token came from: the session cookie can be cleared by signing out, a header cannot. */
  from: 'header' | 'cookie';
}

export type CredentialResult = { ok: true; credential: Credential } | { ok: false; status: 401; message: string };

const refuse = (message: string): CredentialResult => ({ ok: false, status: 401, message });

/** `headersDistinct`: node's headers with repeated ones kept apart (X-Remote-Group may come several times). */
export function credentialOf(headers: IncomingHttpHeaders, distinct: Record<string, string[]>): CredentialResult {
  const auth = headers.authorization;
  let token: string | undefined;
  let from: Credential['from'] = 'header';
  if (auth !== undefined) {
    const m = /^Bearer +(\S+)\s*$/i.exec(auth);
    if (!m) return refuse('the Authorization header is not "Bearer <token>"');
    token = m[1];
  } else {
    token = cookieValue(headers.cookie, SESSION_COOKIE);
    from = 'cookie';
  }
  if (!token) return refuse('sign in: no bearer token (Authorization header or the sign-in form)');
  const bad = tokenProblem(token);
  if (bad) return refuse(bad);
  const users = distinct[PROXY_USER_HEADER] ?? [];
  if (users.length === 0) {
    if ((distinct[PROXY_GROUP_HEADER] ?? []).length > 0)
      return refuse(`${PROXY_GROUP_HEADER} without ${PROXY_USER_HEADER}: an auth proxy names a user`);
    return { ok: true, credential: { token, from } };
  }
  if (users.length > 1 || !users[0]) return refuse(`exactly one ${PROXY_USER_HEADER} header is needed`);
  if (from !== 'header') return refuse(`${PROXY_USER_HEADER} is taken only with the auth proxy's own bearer token`);
  const groups = (distinct[PROXY_GROUP_HEADER] ?? []).flatMap((g) =>
    g
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  return { ok: true, credential: { token, from, impersonate: { user: users[0], groups } } };
}

/** Why a token typed into the sign-in form or sent in a header cannot be one; undefined when it may be. */
export function tokenProblem(token: string): string | undefined {
  if (token.length > MAX_TOKEN_CHARS) return `the token is longer than ${MAX_TOKEN_CHARS} characters`;
  if (!TOKEN.test(token)) return 'the token holds characters no bearer token has';
  return undefined;
}

/** The session cookie for a token that signed in: HttpOnly (no script reads it), SameSite=Strict, Secure. */
export function sessionCookie(token: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=${maxAgeSeconds}`;
}

export const clearedSessionCookie = () => `${SESSION_COOKIE}=; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=0`;
