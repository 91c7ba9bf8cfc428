/**
 * A PackageSyncSet's spec as the rollout accepts it, or the message that names what to change: one reading for
 * the set controller (an InvalidSpec condition) and for `packagesync plan packagesyncset/NAME` (exit 2).
 */
import { SetSpecSchema, type SetSpec } from '../../api/packagesyncset.ts';

export type SetSpecReading = { ok: true; spec: SetSpec } | { ok: false; message: string };

export function readSetSpec(raw: unknown): SetSpecReading {
  const parsed = SetSpecSchema.safeParse(raw);
  if (!parsed.success)
    return { ok: false, message: parsed.error.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`).join('; ') };
  if (parsed.data.template.spec.source.chart !== undefined)
    return {
      ok: false,
      message: 'spec.template.spec.source: only git (url) and OCI (oci) sources roll out in waves in this version',
    };
  return { ok: true, spec: parsed.data };
}
