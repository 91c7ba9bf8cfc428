/**
 * What one PackageSync's status makes of a Notifier's state (notifier-runtime.ts does the rest: the write, the
 * send): the record state machine (core/notify/record.ts) run on it, its messages given their pull-request
 * comments' object lists and put in the outbox.
 */
import type { Notifier } from '../../api/notifier.ts';
import type { PackageSync } from '../../api/packagesync.ts';
import { enqueue, type NotifierState } from '../../core/notify/outbox.ts';
import { PLANS_IN_OUTBOX_MAX, type PlanActions } from '../../core/notify/plan-actions.ts';
import { withPullRequestComments } from '../../core/notify/pull-request.ts';
import { observe, type RecordMessage, type RecordPolicy } from '../../core/notify/record.ts';
import type { LatestPlans } from './latest-plans.ts';

export interface Observed {
  state: NotifierState;
  /** The messages enqueued. */
  messages: RecordMessage[];
  /** Messages the outbox dropped to stay within its bound. */
  dropped: number;
}

/** The state after `ps`'s status was observed under `policy`; undefined when nothing changed. */
export function observeStatus(
  state: NotifierState,
  notifier: Notifier,
  policy: RecordPolicy,
  ps: PackageSync,
  now: number,
  plans: Pick<LatestPlans, 'of'> | undefined,
): Observed | undefined {
  const name = ps.metadata.name;
  const before = state.records[name];
  const r = observe(
    before,
    { namespace: ps.metadata.namespace, name, uid: ps.metadata.uid ?? '', status: ps.status },
    policy,
    now,
  );
  if (JSON.stringify(r.memory) === JSON.stringify(before) && r.messages.length === 0) return undefined;
  const records = { ...state.records };
  if (r.memory) records[name] = r.memory;
  else delete records[name];
  const messages = notifier.spec.pullRequestComments
    ? withPullRequestComments(r.messages, (m) => planOf(state, m, plans))
    : r.messages;
  const enqueued = enqueue({ ...state, records }, messages, now);
  return { state: enqueued.state, messages, dropped: enqueued.dropped };
}

/** A comment's object list, unless the outbox holds its share of lists already (it stays small). */
function planOf(
  state: NotifierState,
  m: RecordMessage,
  plans: Pick<LatestPlans, 'of'> | undefined,
): { plan: PlanActions } | { missing: string } {
  const kept = state.outbox.filter((e) => e.msg.plan).length;
  if (kept >= PLANS_IN_OUTBOX_MAX) return { missing: `${kept} comments wait in this Notifier's outbox with theirs` };
  return plans?.of(m.namespace, m.name, m.uid, m.revision) ?? { missing: 'not recorded' };
}
