import type { KubeObject } from '../object.ts';
import { condition, conditions, optionalInt } from './fields.ts';
import type { Health } from './health.ts';
import { current, failed, inProgress } from './health.ts';

/**
 * Rules that hold for every kind, checked before any kind rule (kstatus checkGenericProperties).
 * Returns undefined when they cannot decide.
 */
export function genericHealth(obj: KubeObject): Health | undefined {
  if (obj.metadata.deletionTimestamp) {
    const finalizers = Array.isArray(obj.metadata.finalizers) ? (obj.metadata.finalizers as unknown[]) : [];
    // Naming the finalizers tells the user which controller holds the deletion up.
    const message = finalizers.length
      ? `deletion waiting for finalizers: ${finalizers.join(', ')}`
      : 'deletion in progress';
    return { status: 'Terminating', reason: 'Terminating', message };
  }

  // Only "behind" counts: some controllers publish -1 before their first pass, which is behind too.
  const generation = obj.metadata.generation;
  const observed = optionalInt(obj, ['status', 'observedGeneration']);
  if (generation !== undefined && observed !== undefined && observed < generation) {
    return inProgress('LatestGenerationNotObserved', `observedGeneration ${observed} behind generation ${generation}`);
  }

  // kstatus takes whichever of the two comes first in the list; we let Stalled win so the answer does not
  // depend on condition order: a controller that says it is stuck is stuck, even while it retries.
  const all = conditions(obj);
  const stalled = all.find((c) => c.type === 'Stalled' && c.status === 'True');
  if (stalled) return failed(stalled.reason ?? 'Stalled', stalled.message ?? 'controller reports Stalled');
  const reconciling = all.find((c) => c.type === 'Reconciling' && c.status === 'True');
  if (reconciling) {
    return inProgress(reconciling.reason ?? 'Reconciling', reconciling.message ?? 'controller reports Reconciling');
  }
  return undefined;
}

/**
 * The Ready convention for kinds without a rule of their own (most custom resources, PackageSync included).
 * kstatus ignores Ready and calls such an object Current even while Ready=False; a False or Unknown Ready is
 * a controller saying "not yet", so we report InProgress. Only Stalled (or a kind rule) makes it Failed,
 * because Ready=False alone does not say whether retrying can help.
 */
export function readyHealth(obj: KubeObject): Health | undefined {
  const ready = condition(obj, 'Ready');
  if (!ready) return undefined;
  if (ready.status === 'True') return current(ready.message ?? 'Ready');
  return inProgress(ready.reason ?? 'NotReady', ready.message ?? `Ready condition is ${ready.status}`);
}

/**
 * For kinds whose controller always publishes status.observedGeneration once it has seen the object (the
 * replica controllers, PackageSync): until then the status, if any, says nothing about this spec. The
 * generic rule cannot catch this because it needs both numbers, and an object nobody has looked at yet
 * would otherwise pass every check (a Deployment of 0 replicas, a PackageSync with no conditions).
 */
export function awaitController(obj: KubeObject, controller: string): Health | undefined {
  if (optionalInt(obj, ['status', 'observedGeneration']) !== undefined) return undefined;
  return inProgress('NotObserved', `waiting for the ${controller} controller to observe it`);
}
