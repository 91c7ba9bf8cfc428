/**
 * A server-side dry run's error → what it says about the object: a field-manager conflict (409 with
 * FieldManagerConflict causes), an immutable field (422 "field is immutable" and its kin, already told apart
 * by the failure reason), or a rejection (validation, admission policy or webhook, RBAC: any other 4xx, and a
 * webhook that could not be called). Anything else (5xx, no answer) is the cluster's problem, not a verdict
 * on the object: undefined.
 */
import { Reason } from '../../api/reasons.ts';
import type { DryRunOutcome, FieldConflict } from './plan-report.ts';

export interface DryRunCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface DryRunError {
  /** HTTP status of the API server's answer (0: none). */
  status: number;
  /** The failure reason the applier gives it (adapters/kube/failures.ts): ApplyConflict, ImmutableFieldChange, … */
  reason: string;
  /** The applier's message: object named, Secret values removed. */
  message: string;
  causes: readonly DryRunCause[];
}

export function classifyDryRunError(e: DryRunError): DryRunOutcome | undefined {
  if (e.reason === Reason.ApplyConflict)
    return { kind: 'conflict', conflicts: fieldConflicts(e.causes), message: e.message };
  if (e.reason === Reason.ImmutableFieldChange) {
    const fields = [...new Set(e.causes.map((c) => c.field ?? '').filter((f) => f !== ''))];
    return { kind: 'immutable', fields, message: e.message };
  }
  if (e.status >= 400 && e.status < 500) return { kind: 'reject', message: e.message };
  // failurePolicy: Fail and the webhook is down: the server answers 500, and the object would be refused
  if (/admission webhook/i.test(e.message)) return { kind: 'reject', message: e.message };
  return undefined;
}

/** `conflict with "kubectl-edit" using v1` per cause → manager and field. */
export function fieldConflicts(causes: readonly DryRunCause[]): FieldConflict[] {
  return causes
    .filter((c) => c.reason === 'FieldManagerConflict')
    .map((c) => ({
      manager: /conflict with "([^"]*)"/.exec(c.message ?? '')?.[1] ?? 'another manager',
      field: c.field ?? '',
    }));
}
