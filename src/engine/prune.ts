/**
 * Step 5b: delete what left the package, in reverse apply order, Background propagation. Only objects
 * whose live copy still carries this PackageSync's owner labels are deleted (and not those annotated
 * packagesync.io/prune: disabled). A delete that fails keeps its inventory entry, so the next
 * reconcile tries again and nothing is forgotten.
 *
 * A delete the API server accepts but that leaves the object in place (a finalizer nobody removes) is
 * a refused prune too: the object still exists, so forgetting it would leave an owned object outside
 * the inventory for good. It is given a moment to go (most finalizers clear in milliseconds), then
 * kept and reported, naming the finalizers. Namespaces are not held by metadata.finalizers (theirs
 * live in spec) and count as gone once their deletion started.
 */
import { Reason } from '../api/reasons.ts';
import type { PackageObjects } from '../adapters/kube/objects.ts';
import { deleteProblem } from '../adapters/kube/failures.ts';
import type { Failure } from '../core/failure.ts';
import { describeRef, refKey, type KubeObject, type ObjectRef } from '../core/object.ts';
import { mayPrune } from '../core/plan/ownership.ts';

export interface PruneResult {
  pruned: ObjectRef[];
  /** Entries that must stay in the inventory: the delete failed, or the object is still there. */
  kept: ObjectRef[];
  /** Left alone on purpose: not ours any more, or opted out. Dropped from the inventory. */
  skipped: ObjectRef[];
  failure?: Failure;
}

export interface PruneOptions {
  signal?: AbortSignal;
  /** How long objects held by finalizers get to disappear before they count as refused. */
  finalizerGraceMs?: number;
}

export async function pruneObjects(
  objects: PackageObjects,
  candidates: readonly ObjectRef[],
  live: ReadonlyMap<string, KubeObject>,
  opts: PruneOptions,
): Promise<PruneResult> {
  const result: PruneResult = { pruned: [], kept: [], skipped: [] };
  const errors: string[] = [];
  const held: { ref: ObjectRef; uid?: string; finalizers: string[] }[] = [];
  const call = { signal: opts.signal };
  // Reverse apply order, one at a time: dependents (custom resources, workloads) go before the
  // Namespaces and CRDs that hold them.
  for (const ref of candidates) {
    const obj = live.get(refKey(ref));
    if (!obj) {
      result.pruned.push(ref); // already gone
      continue;
    }
    if (!mayPrune(obj, objects.owner)) {
      result.skipped.push(ref);
      continue;
    }
    try {
      const outcome = await objects.delete(ref, { ...call, uid: obj.metadata.uid });
      if (outcome.gone) result.pruned.push(ref);
      else held.push({ ref, uid: obj.metadata.uid, finalizers: outcome.finalizers });
    } catch (e) {
      result.kept.push(ref);
      errors.push(deleteProblem(ref, e));
    }
  }

  const deadline = Date.now() + (opts.finalizerGraceMs ?? 2_000);
  for (const h of held) {
    const stillThere = await waitGone(objects, h.ref, h.uid, deadline, call).catch((e: unknown) => {
      errors.push(deleteProblem(h.ref, e));
      return true;
    });
    if (!stillThere) {
      result.pruned.push(h.ref);
      continue;
    }
    result.kept.push(h.ref);
    if (!errors.some((m) => m.startsWith(`${describeRef(h.ref)}: `))) {
      errors.push(
        `${describeRef(h.ref)}: deleted but still terminating, held by finalizer(s) ${h.finalizers.join(', ')}`,
      );
    }
  }

  if (errors.length > 0) {
    result.failure = {
      reason: Reason.PruneFailed,
      message: `could not delete ${errors.length} object(s) that left the package, kept in the inventory: ${errors.slice(0, 5).join('; ')}${errors.length > 5 ? '; …' : ''}`,
      object: result.kept[0]!,
      terminal: false,
    };
  }
  return result;
}

/** True when the object (this uid) still exists at the deadline. */
async function waitGone(
  objects: PackageObjects,
  ref: ObjectRef,
  uid: string | undefined,
  deadline: number,
  opts: { signal?: AbortSignal },
): Promise<boolean> {
  for (;;) {
    const now = await objects.get(ref, opts);
    if (!now || (uid !== undefined && now.metadata.uid !== uid)) return false;
    if (Date.now() >= deadline || opts.signal?.aborted) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
}
