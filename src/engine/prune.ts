/**
 * Step 5b, and the teardown of a deleted PackageSync: delete what left the package in reverse graph
 * order (core/plan/teardown.ts), Background propagation. An object is deleted only once everything that
 * depends on it is gone — custom resources before their CRD, objects before their Namespace, depends-on
 * dependents before their dependency — waiting for finalizers within the budget (the signal), so an
 * operator's finalizers still have their CRD while they run. Independent deletes run concurrently.
 *
 * Only objects whose live copy still carries this PackageSync's owner labels are deleted (and not those
 * annotated packagesync.io/prune: disabled). A delete that fails keeps its inventory entry, so the next
 * reconcile tries again and nothing is forgotten; so do the objects it needs, which are not deleted while
 * it is still there (a CRD outlives a custom resource whose finalizer hangs).
 *
 * A delete the API server accepts but that leaves the object in place (a finalizer nobody removes) is a
 * refused prune too: the object still exists, so forgetting it would leave an owned object outside the
 * inventory for good. When nothing waits for it, it gets a moment to go (most finalizers clear in
 * milliseconds); when something does, up to the budget. Then it is kept and reported, naming the
 * finalizers. Namespaces are not held by metadata.finalizers (theirs live in spec) and count as gone once
 * their deletion started.
 */
import PQueue from 'p-queue';
import { Reason } from '../api/reasons.ts';
import type { PackageObjects } from './ports.ts';
import { deleteProblem } from '../adapters/kube/failures.ts';
import type { Failure } from '../core/failure.ts';
import { describeRef, refKey, type KubeObject, type ObjectRef } from '../core/object.ts';
import { mayPrune } from '../core/plan/ownership.ts';
import { planTeardown } from '../core/plan/teardown.ts';

export interface PruneResult {
  pruned: ObjectRef[];
  /** Entries that must stay in the inventory: the delete failed, the object is still there, or something that depends on it is. */
  kept: ObjectRef[];
  /** Left alone on purpose: not ours any more, or opted out. Dropped from the inventory. */
  skipped: ObjectRef[];
  /** With releaseTerminating: deleted (also in pruned) but still held by finalizers when the wait ended. */
  terminating: ObjectRef[];
  failure?: Failure;
}

export interface PruneOptions {
  /** The budget: waiting for dependents to go ends when it fires. */
  signal?: AbortSignal;
  /** How long objects held by finalizers get to disappear when nothing waits for them. */
  finalizerGraceMs?: number;
  /** Without a signal, how long an object others wait for gets to disappear. */
  waitTimeoutMs?: number;
  /** Concurrent delete requests. */
  concurrency?: number;
  /** prune (default), or the teardown of a deleted PackageSync, where Argo CD's Delete=false also keeps an object. */
  when?: 'prune' | 'teardown';
  /**
   * Teardown: an object whose delete was accepted but that finalizers still hold, and that nothing in the
   * set waits for, counts as deleted (listed in terminating) instead of kept and reported.
   */
  releaseTerminating?: boolean;
  /** Teardown with WaitForTermination: every deleted object gets the whole budget to be gone. */
  waitForTermination?: boolean;
}

export async function pruneObjects(
  objects: PackageObjects,
  candidates: readonly ObjectRef[],
  live: ReadonlyMap<string, KubeObject>,
  opts: PruneOptions,
): Promise<PruneResult> {
  const result: PruneResult = { pruned: [], kept: [], skipped: [], terminating: [] };
  const errors: string[] = [];
  const call = { signal: opts.signal };
  const plan = planTeardown(candidates, live);
  const pending = plan.waitFor.map((w) => w.length);
  const settled = new Array<boolean>(plan.refs.length).fill(false);
  const queue = new PQueue({ concurrency: opts.concurrency ?? 16 });
  const waitUntil = Date.now() + (opts.waitTimeoutMs ?? 60_000);

  /** Kept: and so is everything that waits for it to be gone (transitively). */
  const keep = (i: number) => {
    const stack = [i];
    while (stack.length > 0) {
      const k = stack.pop()!;
      if (settled[k]) continue;
      settled[k] = true;
      result.kept.push(plan.refs[k]!);
      for (const w of plan.waiters[k]!) {
        if (settled[w]) continue;
        errors.push(
          `${describeRef(plan.refs[w]!)}: not deleted while ${describeRef(plan.refs[k]!)}, which depends on it, is still there`,
        );
        stack.push(w);
      }
    }
  };

  const remove = async (i: number): Promise<'gone' | 'skipped' | 'kept' | 'terminating'> => {
    const ref = plan.refs[i]!;
    const obj = live.get(refKey(ref));
    if (!obj) return 'gone';
    if (!mayPrune(obj, objects.owner, opts.when ?? 'prune')) return 'skipped';
    const outcome = await queue.add(() => objects.delete(ref, { ...call, uid: obj.metadata.uid }));
    if (outcome!.gone) return 'gone';
    // Something waits for it to go (its CRD, its Namespace, its depends-on dependency): give it the budget.
    const awaited = plan.waiters[i]!.length > 0;
    const deadline =
      awaited || opts.waitForTermination
        ? opts.signal
          ? Number.POSITIVE_INFINITY
          : waitUntil
        : Date.now() + (opts.finalizerGraceMs ?? 2_000);
    if (!(await waitGone(objects, ref, obj.metadata.uid, deadline, call))) return 'gone';
    if (!awaited && opts.releaseTerminating) return 'terminating';
    errors.push(
      `${describeRef(ref)}: deleted but still terminating, held by finalizer(s) ${outcome!.finalizers.join(', ')}`,
    );
    return 'kept';
  };

  await new Promise<void>((resolve) => {
    let inFlight = 0;
    const start = (i: number) => {
      inFlight++;
      void remove(i)
        .catch((e: unknown) => {
          errors.push(deleteProblem(plan.refs[i]!, e));
          return 'kept' as const;
        })
        .then((outcome) => {
          if (outcome === 'kept') return keep(i);
          if (settled[i]) return;
          settled[i] = true;
          (outcome === 'skipped' ? result.skipped : result.pruned).push(plan.refs[i]!);
          if (outcome === 'terminating') result.terminating.push(plan.refs[i]!);
          for (const w of plan.waiters[i]!) if (--pending[w]! === 0 && !settled[w]) start(w);
        })
        .finally(() => {
          if (--inFlight === 0) resolve();
        });
    };
    const roots = plan.order.filter((i) => pending[i] === 0);
    if (roots.length === 0) resolve();
    for (const i of roots) start(i);
  });

  if (errors.length > 0) {
    result.failure = {
      reason: Reason.PruneFailed,
      message: `could not delete ${result.kept.length} object(s) that left the package, kept in the inventory: ${errors.slice(0, 5).join('; ')}${errors.length > 5 ? '; …' : ''}`,
      object: result.kept[0]!,
      terminal: false,
    };
  }
  return result;
}

/** True when the object (this uid) still exists at the deadline or when the budget ran out. */
async function waitGone(
  objects: PackageObjects,
  ref: ObjectRef,
  uid: string | undefined,
  deadline: number,
  opts: { signal?: AbortSignal },
): Promise<boolean> {
  // The reads ignore the budget signal: one cut short would report an abort, not the finalizers holding it.
  const read = {};
  for (let pause = 100; ; pause = Math.min(pause * 1.5, 1_000)) {
    const now = await objects.get(ref, read);
    if (!now || (uid !== undefined && now.metadata.uid !== uid)) return false;
    if (Date.now() >= deadline || opts.signal?.aborted) return true;
    await new Promise((r) => setTimeout(r, Math.min(pause, Math.max(0, deadline - Date.now()))));
  }
}
