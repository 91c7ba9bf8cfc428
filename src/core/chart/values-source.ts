/**
 * Values from a git repository beside a chart source (Argo CD multi-source `$values`, docs/adr/0041): the
 * git credentials of spec.source.chart.values travel in the chart source's credential record under this
 * prefix, and the combined revision names both sources, so a change to either is a new revision.
 */
export const VALUES_CREDENTIALS_PREFIX = 'values/';
/** spec.source.chart.verify's keyring Secret travels in the same record under this prefix. */
export const PROVENANCE_CREDENTIALS_PREFIX = 'provenance/';

/** The directory of the combined checkout holding the values repository: `$values/<path>` resolves into it. */
export const VALUES_DIR = '$values';

/** Splits the record: the chart repository's own keys, and the values repository's (prefix removed). */
export function splitCredentials(data: Record<string, string> | undefined): {
  chart: Record<string, string> | undefined;
  values: Record<string, string> | undefined;
} {
  if (data === undefined) return { chart: undefined, values: undefined };
  const chart: Record<string, string> = {};
  const values: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) {
    if (k.startsWith(VALUES_CREDENTIALS_PREFIX)) values[k.slice(VALUES_CREDENTIALS_PREFIX.length)] = v;
    else chart[k] = v;
  }
  return {
    chart: Object.keys(chart).length > 0 ? chart : undefined,
    values: Object.keys(values).length > 0 ? values : undefined,
  };
}

/** `<chart revision>+<git revision>`: e.g. `1.2.0@sha256:…+main@sha1:…`. */
export function combinedRevision(chartRevision: string, valuesRevision: string): string {
  return `${chartRevision}+${valuesRevision}`;
}
