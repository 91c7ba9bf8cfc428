/**
 * What keeps another web page from using `packagesync ui` with the user's credentials, decided on the request's
 * headers alone (pure; the server applies it to every request):
 * - Host must be the address the server listens on: a DNS-rebound name (evil.example → 127.0.0.1) is refused,
 *   so a page of another origin cannot even read the API.
 * - Every action (POST) needs the per-server random token in a header, the same token in a SameSite=Strict
 *   cookie, and an Origin (when the browser sends one) equal to the server's own.
 * - The page's Content-Security-Policy allows scripts and styles from the server itself only, nothing inline.
 */
import { timingSafeEqual } from 'node:crypto';

export const CSRF_HEADER = 'x-packagesync-csrf';
export const CSRF_COOKIE = 'packagesync-ui-csrf';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers every answer carries. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** The Host values the server answers to: its own address and port, and `localhost` for a loopback one. */
export function allowedHosts(address: string, port: number): Set<string> {
  const host = address.includes(':') ? `[${address}]` : address;
  const hosts = new Set([`${host}:${port}`]);
  if (address === '127.0.0.1' || address === '::1') hosts.add(`localhost:${port}`);
  return hosts;
}

export type Refusal = { status: number; message: string } | undefined;

export function checkHost(host: string | undefined, allowed: Set<string>): Refusal {
  if (host && allowed.has(host.toLowerCase())) return undefined;
  return { status: 421, message: `this server answers to ${[...allowed].join(' or ')} only` };
}

/** An action's request: token in header and cookie, equal to the server's; Origin, if sent, its own. */
export function checkAction(
  headers: { origin?: string; cookie?: string; token?: string },
  token: string,
  allowed: Set<string>,
): Refusal {
  if (headers.origin !== undefined) {
    let originHost: string | undefined;
    try {
      const u = new URL(headers.origin);
      // https: the in-cluster UI behind an ingress that terminates TLS
      originHost = u.protocol === 'http:' || u.protocol === 'https:' ? u.host : undefined;
    } catch {
      originHost = undefined;
    }
    if (!originHost || !allowed.has(originHost)) return { status: 403, message: 'cross-origin request refused' };
  }
  const cookie = cookieValue(headers.cookie, CSRF_COOKIE);
  if (!sameToken(headers.token, token) || !sameToken(cookie, token))
    return { status: 403, message: 'missing or wrong CSRF token: reload the page' };
  return undefined;
}

function sameToken(given: string | undefined, token: string): boolean {
  if (!given || given.length !== token.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(token));
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Loopback unless the user said otherwise: the server acts with the user's own credentials. */
export function isLoopback(address: string): boolean {
  return address === '127.0.0.1' || address === '::1' || address === 'localhost' || /^127\./.test(address);
}
