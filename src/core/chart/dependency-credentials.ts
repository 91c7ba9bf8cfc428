import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';
import { parseOciRepository } from '../oci/reference.ts';

/**
 * Credentials for the repositories a chart's dependencies come from (spec.source.dependencyRepositories,
 * docs/adr/0041): Argo CD's repository credential templates (one Secret for every repository URL under a
 * prefix) spelt per PackageSync, where Flux looks up a HelmRepository by the dependency's URL. A dependency's
 * repository gets the Secret of the longest entry that is a prefix of its URL on the same scheme, host and port,
 * cut at a path segment: never the credentials of another host. Their Secrets travel in the source's one
 * credential record under `dependencies/<index>/` (Secret keys cannot hold `/`, so nothing collides).
 */
export const DEPENDENCY_CREDENTIALS_PREFIX = 'dependencies/';

export interface DependencyRepositoryEntry {
  url: string;
}

/** The record's keys of entry `index` under their prefix, as engine/source-credentials.ts files them. */
export function dependencyCredentialsKey(index: number, key: string): string {
  return `${DEPENDENCY_CREDENTIALS_PREFIX}${index}/${key}`;
}

/** Splits the record: the source's own keys, and each entry's Secret by its index in the list. */
export function splitDependencyCredentials(data: Record<string, string> | undefined): {
  own: Record<string, string> | undefined;
  byEntry: Map<number, Record<string, string>>;
} {
  const byEntry = new Map<number, Record<string, string>>();
  if (data === undefined) return { own: undefined, byEntry };
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) {
    const m = /^dependencies\/([0-9]+)\/(.+)$/.exec(k);
    if (!m) {
      own[k] = v;
      continue;
    }
    const index = Number(m[1]);
    const entry = byEntry.get(index) ?? {};
    entry[m[2]!] = v;
    byEntry.set(index, entry);
  }
  return { own: Object.keys(own).length > 0 ? own : undefined, byEntry };
}

interface Origin {
  /** scheme://host:port, the port always written. */
  origin: string;
  /** The path with one trailing slash, so a prefix match is cut at a segment. */
  path: string;
}

function originOf(raw: string): Origin | undefined {
  if (raw.startsWith('oci://')) {
    // a whole registry (oci://host) is a prefix too: checked as if it named one repository
    const trimmed = raw.replace(/\/+$/, '');
    const whole = !trimmed.slice('oci://'.length).includes('/');
    const parsed = parseOciRepository(whole ? `${trimmed}/x` : trimmed);
    if (!parsed.ok) return undefined;
    const host = parsed.value.host.toLowerCase();
    return {
      origin: `oci://${/:[0-9]+$/.test(host) ? host : `${host}:443`}`,
      path: whole ? '/' : `/${parsed.value.repository}/`,
    };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
  return { origin: `${url.protocol}//${url.hostname.toLowerCase()}:${port}`, path: url.pathname.replace(/\/*$/, '/') };
}

/**
 * The entry whose Secret a dependency repository gets: the longest prefix of its URL on the same origin
 * (scheme, host, port), or undefined (anonymous). Entries that are not URLs are refused by checkEntries first.
 */
export function entryFor(repository: string, entries: readonly DependencyRepositoryEntry[]): number | undefined {
  const dep = originOf(repository);
  if (dep === undefined) return undefined;
  let best: { index: number; length: number } | undefined;
  for (const [index, entry] of entries.entries()) {
    const e = originOf(entry.url);
    if (e === undefined || e.origin !== dep.origin || !dep.path.startsWith(e.path)) continue;
    if (best === undefined || e.path.length > best.length) best = { index, length: e.path.length };
  }
  return best?.index;
}

/** Every entry is an https://, http:// (loopback, checked where fetched) or oci:// URL with no credentials in it. */
export function checkEntries(entries: readonly DependencyRepositoryEntry[]): Result<void> {
  for (const [i, entry] of entries.entries()) {
    const at = `spec.source.dependencyRepositories[${i}].url`;
    if (originOf(entry.url) === undefined)
      return fail(
        Reason.InvalidSpec,
        `${at} ${JSON.stringify(entry.url.slice(0, 200))} is not an https://, http:// or oci:// repository URL`,
        { terminal: true },
      );
    if (/^[a-z]+:\/\/[^/]*@/i.test(entry.url))
      return fail(Reason.InvalidSpec, `${at} carries credentials in the URL: put them in its secretRef`, {
        terminal: true,
      });
  }
  return ok(undefined);
}
