import type { PackageSync, Spec } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import { fail, ok, type Result } from '../core/failure.ts';
import type { Ports } from './ports.ts';

/**
 * What an OCI source reads from its namespace: the Secret spec.source.oci.secretRef names (registry
 * credentials, maybe ca.crt), and the `ca.crt` of the one certSecretRef names, merged into one record for the
 * source (core/oci/credentials.ts reads it). Never from another namespace.
 */
export async function readOciCredentials(
  ps: PackageSync,
  oci: Pick<NonNullable<Spec['source']['oci']>, 'secretRef' | 'certSecretRef'>,
  ports: Ports,
  // spec.source.chart reads its Secrets the same way (docs/adr/0041)
  kind: 'oci' | 'chart' = 'oci',
): Promise<Result<Record<string, string> | undefined>> {
  const ns = ps.metadata.namespace;
  const read = async (name: string, field: string): Promise<Result<Record<string, string>>> => {
    const data = await ports.secrets.read(ns, name);
    if (data) return ok(data);
    return fail(Reason.AuthSecretNotFound, `Secret ${ns}/${name} named in spec.source.${kind}.${field} does not exist`);
  };
  let data: Record<string, string> | undefined;
  if (oci.secretRef) {
    const got = await read(oci.secretRef.name, 'secretRef');
    if (!got.ok) return got;
    data = got.value;
  }
  if (oci.certSecretRef) {
    const got = await read(oci.certSecretRef.name, 'certSecretRef');
    if (!got.ok) return got;
    const ca = got.value['ca.crt'];
    if (ca === undefined || ca === '') {
      return fail(
        Reason.InvalidAuthSecret,
        `Secret ${ns}/${oci.certSecretRef.name} named in spec.source.${kind}.certSecretRef has no ca.crt`,
        { terminal: true },
      );
    }
    data = { ...data, 'ca.crt': ca };
  }
  return ok(data);
}
