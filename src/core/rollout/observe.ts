/**
 * A child PackageSync as the rollout reads it: healthy only on the exact revision it is pinned to, so a Ready
 * that an older revision earned never lets a wave through.
 */
import type { TargetHealth } from '../../api/packagesyncset.ts';
import { Reason } from '../../api/reasons.ts';

/** What the controller read of one child PackageSync (plain data: status fields, no objects). */
export interface ChildObservation {
  /** A PackageSync of the child's name exists and is not this set's: never taken over, the target cannot deploy. */
  conflict?: boolean;
  /** spec.source.ref.commit of the child as it is in the cluster. */
  pinnedCommit?: string;
  generation?: number;
  observedGeneration?: number;
  ready?: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  stalled?: boolean;
  lastAppliedRevision?: string;
  lastAttemptedRevision?: string;
}

export interface Observed {
  health: TargetHealth;
  reason?: string;
  message?: string;
}

/** The commit of `main@sha1:<id>`, `sha1:<id>` or a bare id; undefined when it names none. */
export function commitOf(revision: string | undefined): string | undefined {
  if (!revision) return undefined;
  const m = /(?:^|[@:])([0-9a-f]{40}|[0-9a-f]{64})$/.exec(revision);
  return m?.[1];
}

export const sameRevision = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && (a === b || (commitOf(a) !== undefined && commitOf(a) === commitOf(b)));

export function observeChild(
  pin: string | undefined,
  child: ChildObservation | undefined,
  startedAt: number | undefined,
  progressDeadlineMs: number,
  now: number,
): Observed {
  if (pin === undefined) return { health: 'Pending' };
  const late = startedAt !== undefined && now - startedAt > progressDeadlineMs;
  const progressing = (message: string): Observed =>
    late
      ? {
          health: 'Failed',
          reason: 'ProgressDeadlineExceeded',
          message: `not healthy on ${pin} within the progress deadline: ${message}`,
        }
      : { health: 'Progressing', message };
  if (!child) return progressing('its PackageSync is not created yet');
  if (child.conflict)
    return {
      health: 'Failed',
      reason: 'ChildNameConflict',
      message: 'a PackageSync of its child’s name exists and is not this set’s: rename or delete it',
    };
  // unreachable whatever the revision: the cluster did not answer, the budget counts it (issue 31)
  if (child.ready === 'False' && child.reason === Reason.RemoteClusterUnreachable)
    return { health: 'Unreachable', reason: child.reason, message: child.message ?? '' };
  if (!sameRevision(child.pinnedCommit, pin)) return progressing('its PackageSync is not pinned to the revision yet');
  if (child.generation !== undefined && child.observedGeneration !== child.generation)
    return progressing('its PackageSync has not read its new spec yet');
  if (child.ready === 'True' && sameRevision(child.lastAppliedRevision, pin)) return { health: 'Healthy' };
  if (child.ready === 'False' && child.stalled && sameRevision(child.lastAttemptedRevision, pin))
    return { health: 'Failed', reason: child.reason ?? 'Failed', message: child.message ?? '' };
  return progressing(child.message ?? 'reconciling');
}
