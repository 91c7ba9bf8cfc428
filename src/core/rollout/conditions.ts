/**
 * The set's kstatus conditions from its rollout phase, the one place that decides them (as core/status.ts does
 * for PackageSync): Reconciling while a rollout moves or waits on a gate, Stalled when it stopped for a person,
 * Ready only when the latest revision went through every wave.
 */
import type { Condition } from '../../api/status-schema.ts';
import type { SetStatus } from '../../api/packagesyncset.ts';

export const SetReason = {
  RolloutSucceeded: 'RolloutSucceeded',
  RolloutProgressing: 'RolloutProgressing',
  RolloutReverted: 'RolloutReverted',
  RolloutHeld: 'RolloutHeld',
  WaitingForRevision: 'WaitingForRevision',
  InvalidSpec: 'InvalidSpec',
} as const;

const MAX_MESSAGE = 1024;
const oneLine = (m: string) => {
  const flat = m.replace(/\s*\n\s*/g, '; ');
  return flat.length > MAX_MESSAGE ? `${flat.slice(0, MAX_MESSAGE - 1)}…` : flat;
};

export function rolloutConditions(
  prev: readonly Condition[] | undefined,
  status: SetStatus,
  generation: number,
  revisionError: { reason: string; message: string } | undefined,
  now: number,
): Condition[] {
  const out: Omit<Condition, 'lastTransitionTime'>[] = [];
  const set = (type: string, s: Condition['status'], reason: string, message: string) =>
    out.push({ type, status: s, reason, message: oneLine(message), observedGeneration: generation });
  const message = status.message ?? '';
  if (revisionError) {
    // the template's ref could not be resolved: the rollout in flight (if any) keeps its state, retried
    set('Ready', 'False', revisionError.reason, revisionError.message);
    set('Reconciling', 'True', revisionError.reason, `${revisionError.message} (retrying)`);
  } else {
    switch (status.phase) {
      case 'Succeeded':
        set('Ready', 'True', SetReason.RolloutSucceeded, message);
        break;
      case 'Reverted':
        set('Ready', 'False', SetReason.RolloutReverted, message);
        set('Stalled', 'True', status.blockedBy?.reason ?? SetReason.RolloutReverted, message);
        break;
      case 'Holding':
        set('Ready', 'False', SetReason.RolloutHeld, message);
        set('Stalled', 'True', status.blockedBy?.reason ?? SetReason.RolloutHeld, message);
        break;
      case 'Progressing':
      case 'Baking':
      case 'Gating': {
        const reason = status.blockedBy?.reason ?? SetReason.RolloutProgressing;
        set('Ready', 'Unknown', reason, message);
        set('Reconciling', 'True', reason, message);
        break;
      }
      default:
        set('Ready', 'Unknown', SetReason.WaitingForRevision, 'the template’s revision is not resolved yet');
        set('Reconciling', 'True', SetReason.WaitingForRevision, 'resolving the template’s revision');
    }
  }
  return out.map((c) => {
    const old = prev?.find((p) => p.type === c.type);
    return {
      ...c,
      lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : new Date(now).toISOString(),
    };
  });
}

/** A spec the controller refuses (a selector or IntOrString zod rejects): named field, nothing stamped or moved. */
export function invalidSpecConditions(
  prev: readonly Condition[] | undefined,
  generation: number,
  message: string,
  now: number,
): Condition[] {
  const c = (type: string, status: Condition['status']) => {
    const old = prev?.find((p) => p.type === type);
    return {
      type,
      status,
      reason: SetReason.InvalidSpec,
      message: oneLine(message),
      observedGeneration: generation,
      lastTransitionTime: old && old.status === status ? old.lastTransitionTime : new Date(now).toISOString(),
    };
  };
  return [c('Ready', 'False'), c('Stalled', 'True')];
}
