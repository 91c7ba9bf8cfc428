/**
 * The credentials of a PackageSync's source: spec.source.secretRef's Secret (git), or the OCI artifact's or
 * the chart repository's (oci-credentials.ts). Always from the PackageSync's own namespace; values never leave this process.
 */
import type { PackageSync, Spec } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import { dependencyCredentialsKey } from '../core/chart/dependency-credentials.ts';
import { PROVENANCE_CREDENTIALS_PREFIX, VALUES_CREDENTIALS_PREFIX } from '../core/chart/values-source.ts';
import { fail, ok, type Result } from '../core/failure.ts';
import { readOciCredentials } from './oci-credentials.ts';
import type { Ports } from './ports.ts';

export async function readCredentials(
  ps: PackageSync,
  spec: Spec,
  ports: Ports,
): Promise<Result<Record<string, string> | undefined>> {
  const own = await readSourceCredentials(ps, spec, ports);
  const entries = spec.source.dependencyRepositories ?? [];
  if (!own.ok || entries.length === 0) return own;
  // each dependency repository's Secret rides in the same record under its index (core/chart/dependency-credentials.ts)
  const record: Record<string, string> = { ...own.value };
  for (const [i, entry] of entries.entries()) {
    const data = await ports.secrets.read(ps.metadata.namespace, entry.secretRef.name);
    if (!data)
      return fail(
        Reason.AuthSecretNotFound,
        `Secret ${ps.metadata.namespace}/${entry.secretRef.name} named in spec.source.dependencyRepositories[${i}].secretRef does not exist`,
      );
    for (const [k, v] of Object.entries(data)) record[dependencyCredentialsKey(i, k)] = v;
  }
  return ok(record);
}

async function readSourceCredentials(
  ps: PackageSync,
  spec: Spec,
  ports: Ports,
): Promise<Result<Record<string, string> | undefined>> {
  if (spec.source.oci) return readOciCredentials(ps, spec.source.oci, ports);
  if (spec.source.chart) {
    const chart = await readChartCredentials(ps, spec.source.chart, ports);
    const values = spec.source.chart.values?.secretRef;
    if (!chart.ok || !values) return chart;
    // the git credentials of the values repository ride in the same record under VALUES_CREDENTIALS_PREFIX
    // (adapters/chart/source-port.ts splits them): one record per source, as every SourcePort takes it
    const data = await ports.secrets.read(ps.metadata.namespace, values.name);
    if (!data)
      return fail(
        Reason.AuthSecretNotFound,
        `Secret ${ps.metadata.namespace}/${values.name} named in spec.source.chart.values.secretRef does not exist`,
      );
    const prefixed = Object.fromEntries(Object.entries(data).map(([k, v]) => [`${VALUES_CREDENTIALS_PREFIX}${k}`, v]));
    return ok({ ...chart.value, ...prefixed });
  }
  const ref = spec.source.secretRef;
  if (!ref) return ok(undefined);
  const data = await ports.secrets.read(ps.metadata.namespace, ref.name);
  if (data) return ok(data);
  return fail(
    Reason.AuthSecretNotFound,
    `Secret ${ps.metadata.namespace}/${ref.name} named in spec.source.secretRef does not exist`,
  );
}

/** The chart repository's Secret, and spec.source.chart.verify's keyring under PROVENANCE_CREDENTIALS_PREFIX. */
async function readChartCredentials(
  ps: PackageSync,
  chart: NonNullable<Spec['source']['chart']>,
  ports: Ports,
): Promise<Result<Record<string, string> | undefined>> {
  const own = await readOciCredentials(ps, chart, ports, 'chart');
  const ref = chart.verify?.secretRef;
  if (!own.ok || !ref) return own;
  const data = await ports.secrets.read(ps.metadata.namespace, ref.name);
  if (!data)
    return fail(
      Reason.AuthSecretNotFound,
      `Secret ${ps.metadata.namespace}/${ref.name} named in spec.source.chart.verify.secretRef does not exist`,
    );
  const prefixed = Object.fromEntries(
    Object.entries(data).map(([k, v]) => [`${PROVENANCE_CREDENTIALS_PREFIX}${k}`, v]),
  );
  return ok({ ...own.value, ...prefixed });
}
