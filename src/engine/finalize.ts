/**
 * A PackageSync being deleted: prune its inventory (when spec.prune, and not suspended) in reverse
 * dependency order (engine/prune.ts: dependents gone before what they need, within spec.timeout), then
 * release the finalizer so the API server can remove it. A prune that fails keeps the finalizer and is
 * retried. With spec.kubeConfig the prune happens in that cluster (engine/target-cluster.ts).
 */
import { durationMs, FINALIZER, type PackageSync } from '../api/packagesync.ts';
import { planPrune } from '../core/plan/prune.ts';
import { parseSpec } from '../core/spec.ts';
import { Reason } from '../api/reasons.ts';
import { readLiveState } from './live.ts';
import type { Ports } from './ports.ts';
import { pruneObjects } from './prune.ts';
import { targetCluster } from './target-cluster.ts';
import type { ReconcileResult } from './run.ts';

/** How soon a failed teardown is tried again. */
const RETRY_MS = 5_000;

export async function finalize(
  ps: PackageSync,
  ports: Ports,
  opts: { signal: AbortSignal; defaultServiceAccount?: string },
): Promise<ReconcileResult> {
  if (!ps.metadata.finalizers?.includes(FINALIZER)) return { failed: false };
  const spec = parseSpec(ps.spec);
  if (spec.ok && spec.value.prune && !spec.value.suspend) {
    const { name, namespace } = ps.metadata;
    const cluster = await targetCluster(namespace, spec.value, ports, opts.signal);
    if (!cluster.ok) {
      // As Flux does: an unreachable cluster is retried (the finalizer stays); a kubeconfig that is gone or
      // refused can never prune, so the objects are left there, said so in an event, and the deletion goes on.
      const { reason, message } = cluster.failure;
      if (reason === Reason.RemoteClusterUnreachable) {
        await ports.packageSyncs.event(ps, 'Warning', reason, `${message}; deletion waits for it`);
        return { failed: true, requeueAfterMs: RETRY_MS };
      }
      await ports.packageSyncs.event(ps, 'Warning', reason, `${message}; its objects were left in that cluster`);
      await ports.packageSyncs.setFinalizer(ps, FINALIZER, false);
      return { failed: false };
    }
    const objects = cluster.value.forPackage(
      { name, namespace },
      spec.value.serviceAccountName ?? opts.defaultServiceAccount,
    );
    const inventory = ps.status?.inventory?.entries ?? [];
    const live = await readLiveState(objects, [], inventory, { signal: opts.signal });
    if (!live.ok) return { failed: true, requeueAfterMs: RETRY_MS };
    const budget = AbortSignal.any([opts.signal, AbortSignal.timeout(durationMs(spec.value.timeout))]);
    const pruned = await pruneObjects(objects, planPrune(inventory, []), live.value.byKey, { signal: budget });
    if (pruned.failure) {
      await ports.packageSyncs.event(ps, 'Warning', pruned.failure.reason, pruned.failure.message);
      return { failed: true, requeueAfterMs: RETRY_MS };
    }
    if (pruned.pruned.length)
      await ports.packageSyncs.event(ps, 'Normal', 'Pruned', `Deleted ${pruned.pruned.length} object(s)`);
  }
  await ports.packageSyncs.setFinalizer(ps, FINALIZER, false);
  return { failed: false };
}
