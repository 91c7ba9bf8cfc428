/**
 * The UI's actions, done exactly as the CLI's `reconcile`, `suspend` and `resume` do them (the annotation, spec.suspend)
 * and as the prune budget's own message says to approve a held revision (the prune-approved annotation naming it),
 * with the user's own credentials, so the API server decides; each one done is recorded as an Event on the
 * PackageSync naming the user. A refusal carries the API server's own message.
 */
import { PRUNE_APPROVED, RECONCILE_REQUESTED_AT, type PackageSync } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import { conditionOf } from '../../core/status.ts';
import { KubeApiError } from '../../adapters/kube/client.ts';
import { packageSyncCollectionPath, type PackageSyncs } from '../../adapters/kube/packagesyncs.ts';
import { reviewedUser } from '../../adapters/kube/self-subject-review.ts';
import type { Cluster } from '../cluster.ts';
import type { Action, ActionResult } from './api-types.ts';

const PATCHES: Record<Action, (at: string, revision: string) => object> = {
  reconcile: (at) => ({ metadata: { annotations: { [RECONCILE_REQUESTED_AT]: at } } }),
  // the controller takes a change of this annotation up at once (manager.ts), as a requested reconcile
  'approve-prune': (_at, revision) => ({ metadata: { annotations: { [PRUNE_APPROVED]: revision } } }),
  suspend: () => ({ spec: { suspend: true } }),
  // resumed and requested in one patch, as `packagesync resume`: the first reconcile after resuming is the requested one
  resume: (at) => ({ metadata: { annotations: { [RECONCILE_REQUESTED_AT]: at } }, spec: { suspend: false } }),
};

const DONE: Record<Action, string> = {
  reconcile: 'reconcile requested',
  'approve-prune': 'prune approved',
  suspend: 'suspended',
  resume: 'resumed',
};

const EVENT_REASON: Record<Action, string> = {
  reconcile: 'ReconcileRequested',
  'approve-prune': 'PruneApproved',
  suspend: 'Suspended',
  resume: 'Resumed',
};

/** Who the kubeconfig authenticates as (a SelfSubjectReview), for the events; `unknown user` if the server won't say. */
export async function whoAmI(cluster: Cluster): Promise<string> {
  try {
    return (await reviewedUser(cluster.client)) ?? 'unknown user';
  } catch {
    return 'unknown user';
  }
}

export async function performAction(
  cluster: Cluster,
  /** Writes the events, as component packagesync-ui. */
  recorder: PackageSyncs,
  user: string,
  namespace: string,
  name: string,
  action: Action,
  /** approve-prune: the revision the page showed as held; approved only while it is the one held. */
  revision = '',
): Promise<{ status: number; result: ActionResult }> {
  const path = `${packageSyncCollectionPath(namespace)}/${encodeURIComponent(name)}`;
  let patched: PackageSync;
  try {
    if (action === 'reconcile') {
      // as `packagesync reconcile`: a request no controller will take up while suspended is refused, not left waiting
      const current = await cluster.client.request<PackageSync>('GET', path);
      if (current.spec.suspend)
        return {
          status: 409,
          result: { ok: false, message: `PackageSync ${namespace}/${name} is suspended: resume it` },
        };
    }
    if (action === 'approve-prune') {
      const current = await cluster.client.request<PackageSync>('GET', path);
      const held = heldRevision(current);
      if (!held || held !== revision)
        return {
          status: 409,
          result: {
            ok: false,
            message: held
              ? `the prune budget holds revision ${held} now, not ${revision || 'the one shown'}: reload`
              : `PackageSync ${namespace}/${name} holds no revision for the prune budget`,
          },
        };
    }
    patched = await cluster.client.request<PackageSync>('PATCH', path, {
      contentType: 'application/merge-patch+json',
      body: PATCHES[action](new Date().toISOString(), revision),
    });
  } catch (e) {
    if (e instanceof KubeApiError)
      return { status: e.status, result: { ok: false, message: `${e.reason}: ${e.message}` } };
    throw e;
  }
  const what = action === 'approve-prune' ? `${DONE[action]} for revision ${revision}` : DONE[action];
  const message = `${what} by ${user} in packagesync ui`;
  // best effort (the user may not create events): the change itself is what counts
  await recorder.event(patched, 'Normal', EVENT_REASON[action], message);
  return { status: 200, result: { ok: true, message: `PackageSync ${namespace}/${name} ${DONE[action]}` } };
}

/** The revision the prune budget holds back: Ready=False PruneBudgetExceeded, at the last attempted revision. */
export function heldRevision(ps: PackageSync): string | undefined {
  const ready = conditionOf(ps.status, 'Ready');
  if (ready?.status !== 'False' || ready.reason !== Reason.PruneBudgetExceeded) return undefined;
  return ps.status?.lastAttemptedRevision;
}
