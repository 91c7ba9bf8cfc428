/**
 * The credentials of a PackageSync's source: spec.source.secretRef's Secret (git), or the OCI artifact's or
 * the chart repository's (oci-credentials.ts). Always from the PackageSync's own namespace; values never leave this process.
 */
import type { PackageSync, Spec } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import { fail, ok, type Result } from '../core/failure.ts';
import { readOciCredentials } from './oci-credentials.ts';
import type { Ports } from './ports.ts';

export async function readCredentials(
  ps: PackageSync,
  spec: Spec,
  ports: Ports,
): Promise<Result<Record<string, string> | undefined>> {
  if (spec.source.oci) return readOciCredentials(ps, spec.source.oci, ports);
  if (spec.source.chart) return readOciCredentials(ps, spec.source.chart, ports, 'chart');
  const ref = spec.source.secretRef;
  if (!ref) return ok(undefined);
  const data = await ports.secrets.read(ps.metadata.namespace, ref.name);
  if (data) return ok(data);
  return fail(
    Reason.AuthSecretNotFound,
    `Secret ${ps.metadata.namespace}/${ref.name} named in spec.source.secretRef does not exist`,
  );
}
