/**
 * Outcome → conditions: the single place that decides what a PackageSync's status says.
 *
 * kstatus conventions, so kubectl, kpt, Flux, Argo CD and cli-utils read it the same way:
 * - `Reconciling` and `Stalled` are abnormal-true: present only while True.
 * - `Ready` is Unknown while working, True on success, False with the reason on failure.
 * - A failure the controller retries by itself keeps `Reconciling=True` (kstatus: InProgress); a failure
 *   that needs a person (bad input, a health timeout) sets `Stalled=True` (kstatus: Failed).
 */
import type { Condition, Status } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import type { Failure } from './failure.ts';
import type { CauseLink } from './health/cause-chain.ts';
import { boundedCause, withFirstCause } from './health/cause-status.ts';
import { describeRef } from './object.ts';
import { driftedCondition } from './plan/drift-report.ts';

export type Outcome =
  /** Work started on a revision: Reconciling=True, Ready=Unknown. */
  | { kind: 'progressing'; revision: string; message: string }
  /** Applied; waiting for objects to become healthy. */
  | { kind: 'waiting'; revision: string; message: string }
  /** Everything applied (and healthy when waiting): Ready=True. */
  | { kind: 'succeeded'; revision: string; message: string }
  /**
   * A step failed; `revision` is what was attempted, when known. `failures`: every failure of a
   * best-effort apply (status.failures), `failure` summing them up.
   */
  | {
      kind: 'failed';
      revision?: string;
      failure: Failure;
      failures?: readonly Failure[];
      /** A health failure's chain to its first cause (status.cause, and named in the Ready message). */
      cause?: readonly CauseLink[];
    }
  /** A dependsOn PackageSync is not Ready yet: not an error, retried. */
  | { kind: 'dependency-not-ready'; message: string }
  /** spec.suspend: the other conditions stay as the last reconcile left them, Suspended=True says why. */
  | { kind: 'suspended' };

export const ProgressingWithRetry = 'ProgressingWithRetry';

export function reduceStatus(prev: Status | undefined, generation: number, outcome: Outcome, now: string): Status {
  if (outcome.kind === 'suspended') return suspendedStatus(prev, generation, now);
  const next: Status = { ...(prev ?? {}) };
  const conditions: Omit<Condition, 'lastTransitionTime'>[] = [];
  const set = (type: string, status: Condition['status'], reason: string, message: string) =>
    conditions.push({ type, status, reason, message: oneLine(message), observedGeneration: generation });

  switch (outcome.kind) {
    case 'progressing':
    case 'waiting': {
      const reason = outcome.kind === 'waiting' ? Reason.HealthCheckPending : Reason.Progressing;
      set('Ready', 'Unknown', reason, outcome.message);
      set('Reconciling', 'True', reason, outcome.message);
      next.lastAttemptedRevision = outcome.revision;
      break;
    }
    case 'succeeded':
      set('Ready', 'True', Reason.ReconciliationSucceeded, outcome.message);
      next.lastAttemptedRevision = outcome.revision;
      next.lastAppliedRevision = outcome.revision;
      next.observedGeneration = generation;
      break;
    case 'failed': {
      const f = outcome.failure;
      const cause = outcome.cause ?? [];
      set(
        'Ready',
        'False',
        f.reason,
        cause.length > 0 ? withFirstCause(oneLine(f.message), cause, MAX_MESSAGE) : f.message,
      );
      if (f.terminal || f.reason === Reason.HealthCheckFailed) set('Stalled', 'True', f.reason, f.message);
      else set('Reconciling', 'True', ProgressingWithRetry, `${f.message} (retrying)`);
      if (outcome.revision) next.lastAttemptedRevision = outcome.revision;
      next.observedGeneration = generation;
      next.failures = (outcome.failures ?? [f]).slice(0, MAX_FAILURES).map((x) => ({
        ...(x.object ? { object: describeRef(x.object) } : {}),
        reason: x.reason,
        message: oneLine(x.message),
      }));
      if (cause.length > 0) next.cause = boundedCause(cause);
      else delete next.cause;
      break;
    }
    case 'dependency-not-ready':
      set('Ready', 'False', Reason.DependencyNotReady, outcome.message);
      set('Reconciling', 'True', Reason.DependencyNotReady, outcome.message);
      break;
  }
  // failures describe the last failed run: a new run, a success, a dependency gate clear them
  if (outcome.kind !== 'failed') {
    delete next.failures;
    delete next.cause;
  }
  // status.drift is set by the run that looked (Detect mode); Drifted=True says so while it lists objects
  const drifted = driftedCondition(next.drift, generation);
  if (drifted) set(drifted.type, drifted.status, drifted.reason, drifted.message);
  next.conditions = conditions.map((c) => ({ ...c, lastTransitionTime: transitionTime(prev?.conditions, c, now) }));
  return next;
}

export const SuspendedCondition = 'Suspended';
const SUSPENDED_MESSAGE =
  'spec.suspend is true: nothing is fetched, applied or pruned until it is resumed; the other conditions are ' +
  'from the last reconcile';

/**
 * A suspended PackageSync keeps what the last reconcile said (a Ready=True stays: the objects are still as
 * it left them) and says it is suspended in its own condition, which kstatus readers ignore (they read
 * Reconciling and Stalled). observedGeneration is not advanced: the spec as it is now was not reconciled,
 * so kstatus reads a suspend that changed the spec as InProgress, as it does for Flux.
 */
function suspendedStatus(prev: Status | undefined, generation: number, now: string): Status {
  const others = (prev?.conditions ?? []).filter((c) => c.type !== SuspendedCondition);
  const suspended = {
    type: SuspendedCondition,
    status: 'True' as const,
    reason: Reason.Suspended,
    message: SUSPENDED_MESSAGE,
    observedGeneration: generation,
  };
  return {
    ...(prev ?? {}),
    conditions: [...others, { ...suspended, lastTransitionTime: transitionTime(prev?.conditions, suspended, now) }],
  };
}

/** lastTransitionTime moves only when the condition's status changes. */
function transitionTime(prev: Condition[] | undefined, c: Omit<Condition, 'lastTransitionTime'>, now: string): string {
  const old = prev?.find((p) => p.type === c.type);
  return old && old.status === c.status ? old.lastTransitionTime : now;
}

const MAX_MESSAGE = 1024;
/** status.failures stays small: the Ready message counts the rest, the CLI and events name them all. */
export const MAX_FAILURES = 20;
function oneLine(message: string): string {
  const flat = message.replace(/\s*\n\s*/g, '; ');
  return flat.length > MAX_MESSAGE ? `${flat.slice(0, MAX_MESSAGE - 1)}…` : flat;
}

export function conditionOf(status: Status | undefined, type: string): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/** True when the PackageSync is Ready for the generation it has now (a dependsOn gate). */
export function isReadyFor(status: Status | undefined, generation: number | undefined): boolean {
  const ready = conditionOf(status, 'Ready');
  return ready?.status === 'True' && status?.observedGeneration === generation;
}

/**
 * Same conditions, revisions, inventory, counts and history: a status write would change nothing a reader
 * cares about (condition timestamps aside, which move only with a condition's status).
 */
export function sameStatus(a: Status | undefined, b: Status): boolean {
  const strip = (s: Status | undefined) =>
    JSON.stringify({
      c: (s?.conditions ?? []).map(({ type, status, reason, message, observedGeneration }) => [
        type,
        status,
        reason,
        message,
        observedGeneration,
      ]),
      g: s?.observedGeneration,
      r: [s?.lastAttemptedRevision, s?.lastAppliedRevision, s?.lastHandledReconcileAt],
      // the objects, not where they are stored (inline or in shards, ADR 0027)
      i: s?.inventory?.entries,
      o: s?.objects,
      h: s?.history,
      f: s?.failures,
      d: s?.drift && [s.drift.total, s.drift.objects],
      y: s?.lastDriftCorrection,
      x: s?.cause,
    });
  return strip(a) === strip(b);
}
