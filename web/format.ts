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

export const setHref = (namespace: string, name: string) =>
  `#/set/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;

/** What is left of a wait that ends at `end`: 4m 05s, 12s; `0s` once it is over. */
export function timeLeft(end: string, now = Date.now()): string {
  const s = Math.max(0, Math.ceil((Date.parse(end) - now) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** An object's page, in the PackageSync it belongs to (an empty group or namespace is an empty segment). */
export const objectHref = (
  ps: { namespace: string; name: string },
  o: { group: string; kind: string; namespace: string; name: string },
) => `#/obj/${[ps.namespace, ps.name, o.group, o.kind, o.namespace, o.name].map(encodeURIComponent).join('/')}`;

/** As kubectl and every message name a kind: built-in groups (apps, batch, *.k8s.io) unnamed, custom ones named. */
export const kindOf = (o: { group: string; kind: string }) =>
  o.group.includes('.') && !o.group.endsWith('.k8s.io') ? `${o.kind}.${o.group}` : o.kind;

/** What `packagesync plan` exit codes mean (docs/cli.md#plan). */
export const PLAN_EXIT: Record<number, string> = {
  0: 'no changes',
  1: 'changes',
  5: 'applying would fail',
};
