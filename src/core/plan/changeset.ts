import type { ObjectRef } from '../object.ts';

/** What happened to one object in one reconcile. */
export type ChangeAction = 'created' | 'configured' | 'unchanged' | 'pruned' | 'skipped' | 'failed';

export interface Change {
  ref: ObjectRef;
  action: ChangeAction;
  /** Why it was skipped or failed; never object data. */
  message?: string;
}

/** Summary order: what changed first, then what did not happen. */
const summaryOrder: readonly ChangeAction[] = ['created', 'configured', 'pruned', 'skipped', 'failed'];

export function countChanges(changes: readonly Change[]): Record<ChangeAction, number> {
  const counts: Record<ChangeAction, number> = {
    created: 0,
    configured: 0,
    unchanged: 0,
    pruned: 0,
    skipped: 0,
    failed: 0,
  };
  for (const change of changes) counts[change.action]++;
  return counts;
}

/** `12 created, 3 configured, 2 pruned`; unchanged objects are not news, so not counted; `no changes` if nothing else. */
export function summarizeChanges(changes: readonly Change[]): string {
  const counts = countChanges(changes);
  const parts = summaryOrder.filter((action) => counts[action] > 0).map((action) => `${counts[action]} ${action}`);
  return parts.length > 0 ? parts.join(', ') : 'no changes';
}

/** True when the reconcile wrote something to the cluster. */
export function hasChanges(changes: readonly Change[]): boolean {
  return changes.some(
    (change) => change.action === 'created' || change.action === 'configured' || change.action === 'pruned',
  );
}
