/**
 * The last apply's object list per PackageSync (docs/adr/0043), for the pull-request comment of the revision it
 * belongs to: the engine reports it after each apply (Ports.observe.changes), a Notifier that comments reads it
 * when the record ends. In memory, one bounded list per PackageSync: a comment enqueued after a controller restart
 * says the list is not available, as the comment itself (in the outbox) is what must survive.
 */
import type { Change } from '../../core/plan/changeset.ts';
import { planActionsOf, type PlanActions } from '../../core/notify/plan-actions.ts';

interface Kept {
  uid: string;
  revision: string;
  plan: PlanActions;
}

export class LatestPlans {
  private readonly byName = new Map<string, Kept>();

  record(ps: { namespace: string; name: string; uid: string }, revision: string, changes: readonly Change[]): void {
    const key = `${ps.namespace}/${ps.name}`;
    const plan = planActionsOf(changes);
    const old = this.byName.get(key);
    // a later reconcile of the same revision that changed nothing (a resync, the health wait's return) is not
    // what the revision did: the list that changed something stays
    if (old && old.uid === ps.uid && old.revision === revision && old.plan.total > 0 && plan.total === 0) return;
    this.byName.set(key, { uid: ps.uid, revision, plan });
  }

  /** The list of this revision's apply, or why there is none. */
  of(namespace: string, name: string, uid: string, revision: string): { plan: PlanActions } | { missing: string } {
    const kept = this.byName.get(`${namespace}/${name}`);
    if (kept && kept.uid === uid && kept.revision === revision) return { plan: kept.plan };
    return { missing: 'this controller did not apply this revision since it started' };
  }

  forget(namespace: string, name: string): void {
    this.byName.delete(`${namespace}/${name}`);
  }
}
