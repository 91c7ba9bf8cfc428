/**
 * The registry's `WWW-Authenticate` challenge (distribution's token auth, RFC 6750 / RFC 7235): `Basic
 * realm="…"` → send the credentials as Basic; `Bearer realm="…",service="…",scope="…"` → ask the realm for
 * a token (with Basic credentials when there are any) and send it as Bearer.
 */
export type Challenge = { scheme: 'basic' } | { scheme: 'bearer'; realm: string; service?: string; scope?: string };

export function parseChallenge(header: string | null | undefined): Challenge | undefined {
  if (!header) return undefined;
  const m = /^\s*(\w+)\s*(.*)$/s.exec(header);
  if (!m) return undefined;
  const scheme = m[1]!.toLowerCase();
  if (scheme === 'basic') return { scheme: 'basic' };
  if (scheme !== 'bearer') return undefined;
  const params: Record<string, string> = {};
  for (const p of m[2]!.matchAll(/(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g)) {
    params[p[1]!.toLowerCase()] = (p[2] ?? p[3] ?? '').replace(/\\(.)/g, '$1');
  }
  if (!params.realm) return undefined;
  return {
    scheme: 'bearer',
    realm: params.realm,
    ...(params.service !== undefined ? { service: params.service } : {}),
    ...(params.scope !== undefined ? { scope: params.scope } : {}),
  };
}
