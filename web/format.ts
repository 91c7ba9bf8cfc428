/** Small formatting helpers shared by the pages. */

/** kubectl's age: 45s, 12m, 5h, 3d. */
export function age(from: string | undefined, now = Date.now()): string {
  if (!from) return '-';
  const s = Math.max(0, Math.floor((now - Date.parse(from)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** main@sha1:3f2a9c01b7de — enough of the SHA to find the commit. */
export function shortRevision(revision: string | undefined): string {
  if (!revision) return '-';
  return revision.replace(/(sha1|sha256):([0-9a-f]{12})[0-9a-f]+/, '$1:$2');
}

export const psHref = (namespace: string, name: string) =>
  `#/ps/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
