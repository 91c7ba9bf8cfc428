/**
 * Where a PackageSync's package comes from, in the words a person reads in `packagesync status` and the web UI:
 * the address (a git URL, an OCI repository, or a chart in a chart repository) and which version of it. One
 * place, so a new source kind is not shown as an empty string somewhere (OCI and chart sources were).
 */
import type { PackageSync } from '../api/packagesync.ts';

type Source = Partial<PackageSync['spec']['source']>;

export interface SourceAddress {
  /** `https://host/repo.git`, `oci://host/path`, or `https://charts.example chart web`. */
  address: string;
  /** `branch main`, `semver ^1.2`, `version 1.x`; what is applied when nothing is named: `remote HEAD`, `tag latest`. */
  version: string;
}

export function sourceAddress(source: Source | undefined): SourceAddress {
  if (source?.chart) {
    const { repository, name, version } = source.chart;
    return { address: `${repository} chart ${name}`, version: version ? `version ${version}` : 'the newest version' };
  }
  if (source?.oci) return { address: source.oci.url, version: firstOf(source.oci.ref) ?? 'tag latest' };
  return { address: source?.url ?? '', version: firstOf(source?.ref) ?? 'remote HEAD' };
}

function firstOf(ref: object | undefined): string | undefined {
  const entry = Object.entries(ref ?? {}).find(([, v]) => typeof v === 'string');
  return entry ? `${entry[0]} ${entry[1] as string}` : undefined;
}

/**
 * Every git repository a source reads: its own URL, and the values repository beside a chart (spec.source.chart.values).
 * A requested reconcile or a push forgets what ls-remote said about each of them, or a values commit made a moment ago
 * is read as the old one until the shared answer's TTL runs out.
 */
export function gitUrlsOf(source: Source | undefined): string[] {
  return [source?.url, source?.chart?.values?.url].filter((u): u is string => typeof u === 'string' && u !== '');
}
