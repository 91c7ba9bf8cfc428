/**
 * A PackageSync being deleted: spec.deletionPolicy decides (core/plan/deletion-policy.ts) whether its
 * inventory is deleted, in reverse dependency order (engine/prune.ts: dependents gone before what they
 * need, within spec.timeout), and whether the teardown waits until every object is gone; then the
 * finalizer is released so the API server can remove it. A delete that fails keeps the finalizer and is
 * retried. Objects that opted out (prune disabled, apply Ignore, Argo CD's Delete=false) stay; protected
 * kinds are deleted like the rest, as before deletionPolicy existed (they are protected from prune, which
 * is not an intent to delete; deleting the PackageSync is). With spec.kubeConfig the teardown happens in that
 * cluster (engine/target-cluster.ts).
 */
import { durationMs, FINALIZER } from '../api/packagesync.ts';
import { describeRef } from '../core/object.ts';
import { teardownFor } from '../core/plan/deletion-policy.ts';
import { planPrune } from '../core/plan/prune.ts';
import { parseSpec } from '../core/spec.ts';
import { Reason } from '../api/reasons.ts';
import { readLiveState } from './live.ts';
import { pruneObjects } from './prune.ts';
import { targetCluster } from './target-cluster.ts';
import type { ReconcileResult, Run } from './run.ts';

/**
 * Tears the PackageSync down through its run context, the one exit (core/exit.ts): a failure is a Warning event
 * and a log line, and comes back soon; a deleting PackageSync's status is left as it was.
 */
export async function finalize(run: Run, settings: { defaultServiceAccount?: string }): Promise<ReconcileResult> {
  const ps = run.loaded;
  const { ports, signal } = run;
  if (!ps.metadata.finalizers?.includes(FINALIZER)) return run.done();
  const spec = parseSpec(ps.spec);
  const teardown = spec.ok
    ? teardownFor(spec.value.deletionPolicy, spec.value.prune, spec.value.suspend)
    : { delete: false, waitForTermination: false };
  if (spec.ok && teardown.delete) {
    const { name, namespace } = ps.metadata;
    const cluster = await targetCluster(namespace, spec.value, ports, signal);
    if (!cluster.ok) {
      // As Flux does: an unreachable cluster is retried (the finalizer stays); a kubeconfig that is gone or
      // refused can never prune, so the objects are left there, said so in an event, and the deletion goes on.
      if (cluster.failure.reason === Reason.RemoteClusterUnreachable)
        return run.teardownFailed(cluster.failure, '; deletion waits for it');
      const { reason, message } = cluster.failure;
      await run.told('Warning', reason, `${message}; its objects were left in that cluster`);
      await ports.packageSyncs.setFinalizer(ps, FINALIZER, false);
      return run.done();
    }
    const objects = cluster.value.forPackage(
      { name, namespace },
      spec.value.serviceAccountName ?? settings.defaultServiceAccount,
    );
    const inventory = ps.status?.inventory?.entries ?? [];
    const live = await readLiveState(objects, [], inventory, { signal });
    // the live copies say which objects are still ours to delete: without them nothing is deleted yet
    if (!live.ok) return run.teardownFailed(live.failure, '; the deletion waits until they can be read');
    const budget = AbortSignal.any([signal, AbortSignal.timeout(durationMs(spec.value.timeout))]);
    const pruned = await pruneObjects(objects, planPrune(inventory, []), live.value.byKey, {
      signal: budget,
      when: 'teardown',
      releaseTerminating: true,
      waitForTermination: teardown.waitForTermination,
    });
    if (pruned.failure) return run.teardownFailed(pruned.failure);
    if (pruned.pruned.length) await run.told('Normal', 'Pruned', `Deleted ${pruned.pruned.length} object(s)`);
    // WaitForTermination gave them spec.timeout, as Flux does; what finalizers still hold is named, not waited on.
    if (teardown.waitForTermination && pruned.terminating.length > 0) {
      const held = pruned.terminating.slice(0, 5).map(describeRef).join(', ');
      const more = pruned.terminating.length > 5 ? ` and ${pruned.terminating.length - 5} more` : '';
      await run.told(
        'Warning',
        'TerminationTimeout',
        `Still terminating after spec.timeout, held by finalizers: ${held}${more}; the PackageSync is removed anyway`,
      );
    }
  }
  await ports.packageSyncs.setFinalizer(ps, FINALIZER, false);
  return run.done();
}
