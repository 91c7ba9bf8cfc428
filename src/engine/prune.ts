/**
 * Step 5b: delete what left the package, in reverse apply order, Background propagation. Only objects
 * whose live copy still carries this PackageSync's owner labels are deleted (and not those annotated
 * packagesync.io/prune: disabled). A delete that fails keeps its inventory entry, so the next
 * reconcile tries again and nothing is forgotten.
 */
import { Reason } from '../api/reasons.ts';
import type { Objects } from '../adapters/kube/objects.ts';
import type { Failure } from '../core/failure.ts';
import { describeRef, refKey, type KubeObject, type ObjectRef } from '../core/object.ts';
import { mayPrune, type Owner } from '../core/plan/ownership.ts';

export interface PruneResult {
  pruned: ObjectRef[];
  /** Entries that must stay in the inventory: the delete failed. */
  kept: ObjectRef[];
  /** Left alone on purpose: not ours any more, or opted out. Dropped from the inventory. */
  skipped: ObjectRef[];
  failure?: Failure;
}

export async function pruneObjects(
  objects: Objects,
  candidates: ObjectRef[],
  live: Map<string, KubeObject>,
  owner: Owner,
  opts: { impersonate?: string; signal?: AbortSignal },
): Promise<PruneResult> {
  const result: PruneResult = { pruned: [], kept: [], skipped: [] };
  const errors: string[] = [];
  // Reverse apply order, one at a time: dependents (custom resources, workloads) go before the
  // Namespaces and CRDs that hold them.
  for (const ref of candidates) {
    const obj = live.get(refKey(ref));
    if (!obj) {
      result.pruned.push(ref); // already gone
      continue;
    }
    if (!mayPrune(obj, owner)) {
      result.skipped.push(ref);
      continue;
    }
    try {
      await objects.delete(ref, { ...opts, uid: obj.metadata.uid });
      result.pruned.push(ref);
    } catch (e) {
      result.kept.push(ref);
      const err = e as { status?: number; message?: string };
      errors.push(`${describeRef(ref)}: ${err.status === 403 ? 'forbidden' : (err.message ?? String(e))}`);
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
