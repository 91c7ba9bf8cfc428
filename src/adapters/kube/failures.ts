/**
 * API errors on package objects → Failures a user can act on: which object, which field, which other
 * field manager, which verb and resource was forbidden. The API server's own messages quote values
 * ("Invalid value: …"); for Secrets those values are removed, so no Secret data reaches status, events
 * or logs (invariant 5).
 */
import { FIELD_MANAGER } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import { errorText, type Failure } from '../../core/failure.ts';
import { describeRef, refOf, type KubeObject, type ObjectRef } from '../../core/object.ts';
import { KubeApiError } from './client.ts';

interface Cause {
  reason?: string;
  message?: string;
  field?: string;
}

/**
 * How the API server words "this field cannot change": `field is immutable` (most kinds), `may not change
 * once set` (Service clusterIP), `cannot change roleRef`, `spec is immutable after creation` (PVC), and
 * `updates to statefulset spec for fields other than … are forbidden`.
 */
const IMMUTABLE = /\bimmutable\b|may not change once set|cannot change\b|updates to \S+ spec for fields other than/i;

/** Turns an API error on an object into a Failure a user can act on. */
export function applyFailure(obj: KubeObject, e: unknown, verb: 'apply' | 'delete' = 'apply'): Failure {
  const ref = refOf(obj);
  const what = describeRef(ref);
  const secret = ref.kind === 'Secret' && ref.group === '';
  const failure = (reason: string, message: string): Failure => ({ reason, message, object: ref, terminal: false });
  if (!(e instanceof KubeApiError)) {
    return failure(Reason.ApplyFailed, `${verb} ${what}: ${errorText(e)}`);
  }
  const causes = causesOf(e);
  if (e.status === 409 && verb === 'apply' && causes.some((c) => c.reason === 'FieldManagerConflict')) {
    return failure(
      Reason.ApplyConflict,
      `${what}: ${conflictSummary(causes)}; remove the field from the package, let ${FIELD_MANAGER} own it ` +
        `(kubectl apply --server-side --field-manager=${FIELD_MANAGER}), or set spec.force: true`,
    );
  }
  if (e.status === 422 && verb === 'apply') {
    const immutable = causes.filter((c) => IMMUTABLE.test(c.message ?? ''));
    if (immutable.length > 0 || (causes.length === 0 && IMMUTABLE.test(e.message))) {
      const fields = [...new Set(immutable.map((c) => c.field).filter((f) => f))];
      const named = fields.length > 0 ? `${fields.join(', ')} cannot be changed` : 'an immutable field changed';
      return failure(
        Reason.ImmutableFieldChange,
        `${what}: ${named} (${IMMUTABLE.exec(immutable[0]?.message ?? e.message)?.[0] ?? 'immutable'}); ` +
          'to delete and recreate it, annotate it packagesync.io/recreate: enabled in the package (or set spec.force: true)',
      );
    }
  }
  if (e.status === 403) {
    // The API server's message names the identity, the verb and the resource: exactly what to grant.
    return failure(Reason.Forbidden, `${verb} ${what}: ${trimMessage(apiMessage(e, secret))}`);
  }
  if (e.status === 404 && verb === 'apply') return failure(Reason.UnknownKind, `${what}: ${trimMessage(e.message)}`);
  return failure(
    verb === 'apply' ? Reason.ApplyFailed : Reason.PruneFailed,
    `${verb} ${what}: ${trimMessage(apiMessage(e, secret))}`,
  );
}

/** One line per failed delete, for PruneFailed: the object and why (the verb and resource when forbidden). */
export function deleteProblem(ref: ObjectRef, e: unknown): string {
  const message = e instanceof KubeApiError ? apiMessage(e, ref.kind === 'Secret') : errorText(e);
  return `${describeRef(ref)}: ${trimMessage(message, 300)}`;
}

function causesOf(e: KubeApiError): Cause[] {
  const causes = (e.details as { causes?: unknown } | undefined)?.causes;
  return Array.isArray(causes) ? (causes as Cause[]) : [];
}

/** `"kubectl-edit" (.data.key, .data.other), "hpa" (.spec.replicas)`, from the 409's causes. */
function conflictSummary(causes: Cause[]): string {
  const byManager = new Map<string, string[]>();
  for (const c of causes) {
    if (c.reason !== 'FieldManagerConflict') continue;
    const manager = /conflict with ("[^"]*")/.exec(c.message ?? '')?.[1] ?? 'another manager';
    byManager.set(manager, [...(byManager.get(manager) ?? []), c.field ?? '?']);
  }
  const parts = [...byManager].map(
    ([m, fields]) => `${m} (${fields.slice(0, 5).join(', ')}${fields.length > 5 ? ', …' : ''})`,
  );
  return `field conflict with other field managers: ${parts.join(', ')}`;
}

/**
 * The API server's message; for Secrets only field names and rules, never a quoted value: everything
 * from "Invalid value: " to the last ": " of a cause goes (a value may itself contain ": ").
 */
function apiMessage(e: KubeApiError, secret: boolean): string {
  if (!secret) return e.message;
  const strip = (m: string) => {
    const at = m.indexOf('Invalid value: ');
    return at < 0 ? m : `${m.slice(0, at)}Invalid value (not shown): ${m.slice(m.lastIndexOf(': ') + 2)}`;
  };
  const causes = causesOf(e).filter((c) => c.field || c.message);
  const head = e.message.split('\n')[0]!;
  if (causes.length === 0) return strip(head);
  const subject = head.includes(' is invalid: ') ? `${head.slice(0, head.indexOf(' is invalid: '))} is invalid: ` : '';
  return subject + causes.map((c) => `${c.field ?? ''}: ${strip((c.message ?? '').split('\n')[0]!)}`).join('; ');
}

function trimMessage(message: string, max = 400): string {
  return message.length > max ? `${message.slice(0, max)}…` : message;
}

/**
 * An exception that ended a reconcile mid-way (the API server restarting, a connection reset, a request
 * timeout), as status and events may say it: the kind of fault, never the raw message — an API server's
 * message can quote what it was sent, and a network error can carry a URL.
 */
export function interruptionMessage(e: unknown): string {
  if (e instanceof KubeApiError) return `the API server answered ${e.status}${e.reason ? ` ${e.reason}` : ''}`;
  const err = e as { name?: unknown; code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = [err?.code, err?.cause?.code].find((c) => typeof c === 'string' && /^[A-Z][A-Z0-9_]*$/.test(c));
  if (err?.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return 'a request to the API server timed out';
  if (code) return `no answer from the API server (${String(code)})`;
  return `an unexpected error (${typeof err?.name === 'string' && /^\w+$/.test(err.name) ? err.name : 'Error'}); see the controller log`;
}
