import { SpecSchema, type Spec } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import { fail, ok, type Result } from './failure.ts';

/**
 * Validates and defaults a spec read from the cluster. A spec the schema refuses is InvalidSpec, naming the
 * field to fix; retrying the same spec cannot help (terminal).
 */
/**
 * With --no-cross-namespace-refs (Flux's lockdown for multi-tenancy), a reference to another namespace's object
 * is InvalidSpec naming the field: a tenant can neither wait on nor learn about another tenant's PackageSyncs.
 * spec.dependsOn is the only such reference (every secretRef reads the PackageSync's own namespace).
 */
export function checkSameNamespaceRefs(spec: Pick<Spec, 'dependsOn'>, namespace: string): Result<void> {
  for (const [i, d] of (spec.dependsOn ?? []).entries()) {
    if (d.namespace !== undefined && d.namespace !== namespace) {
      return fail(
        Reason.InvalidSpec,
        `spec.dependsOn[${i}].namespace: ${d.namespace} is another namespace, and this controller refuses ` +
          `cross-namespace references (--no-cross-namespace-refs): depend on a PackageSync of ${namespace}`,
        { terminal: true },
      );
    }
  }
  return ok(undefined);
}

export function parseSpec(raw: unknown): Result<Spec> {
  const r = SpecSchema.safeParse(raw);
  if (r.success) return ok(r.data);
  const issue = r.error.issues[0]!;
  return fail(Reason.InvalidSpec, `spec.${issue.path.join('.')}: ${issue.message}`, { terminal: true });
}
