/**
 * Whether a set's new status differs from the stored one only in what its children's progress reports: each
 * target's health, reason and message, and each wave's healthy and failed counts. Every pass recomputes those from
 * the children (step.ts observes each child anew), so no decision reads them back from status: their write can wait
 * a moment without changing what the rollout does. A change of pins, phases, timestamps, gates, conditions or
 * revision is never progress only: it is written at once, before the children are touched (crash safety).
 */
import type { SetStatus } from '../../api/packagesyncset.ts';
import { canonicalJson } from '../render/canonical.ts';

const withoutProgress = (s: SetStatus | undefined): string => {
  if (!s) return '';
  // canonical: the stored status comes back from the API server with its keys sorted
  const text = canonicalJson({
    ...s,
    targets: s.targets?.map(({ health: _h, reason: _r, message: _m, ...rest }) => rest),
    waves: s.waves?.map(({ healthy: _h, failed: _f, ...rest }) => rest),
  });
  // a wave in progress says how many of its targets are healthy (step.ts): in blockedBy, the message and the
  // conditions alike; that count is progress too
  const counting = s.blockedBy?.reason === 'WaveProgressing' ? s.blockedBy.message : undefined;
  return counting ? text.replaceAll(JSON.stringify(counting).slice(1, -1), '(progress)') : text;
};

export function onlyProgress(stored: SetStatus | undefined, next: SetStatus): boolean {
  return stored !== undefined && withoutProgress(stored) === withoutProgress(next);
}

/**
 * When a pass writes the set's status: `'unchanged'` (what is stored already says it, key order aside), `'now'`, or
 * the moment a change of progress only is due (`progressEveryMs` after this process last wrote, `writtenAt`).
 */
export function statusWrite(
  stored: SetStatus | undefined,
  next: SetStatus,
  writtenAt: number | undefined,
  now: number,
  progressEveryMs: number,
): 'unchanged' | 'now' | { dueAt: number } {
  if (canonicalJson(stored ?? {}) === canonicalJson(next)) return 'unchanged';
  if (!onlyProgress(stored, next)) return 'now';
  const dueAt = (writtenAt ?? 0) + progressEveryMs;
  return dueAt <= now ? 'now' : { dueAt };
}
