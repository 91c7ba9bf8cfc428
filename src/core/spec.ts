import { SpecSchema, type Spec } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import { fail, ok, type Result } from './failure.ts';

/**
 * Validates and defaults a spec read from the cluster. A spec the schema refuses is InvalidSpec, naming the
 * field to fix; retrying the same spec cannot help (terminal).
 */
export function parseSpec(raw: unknown): Result<Spec> {
  const r = SpecSchema.safeParse(raw);
  if (r.success) return ok(r.data);
  const issue = r.error.issues[0]!;
  return fail(Reason.InvalidSpec, `spec.${issue.path.join('.')}: ${issue.message}`, { terminal: true });
}
