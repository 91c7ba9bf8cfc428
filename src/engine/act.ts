/**
 * Step 5, shared by the controller's reconcile and `packagesync apply`: save the inventory as old ∪ new,
 * apply wave by wave, and only after every apply succeeded prune what left the package and shrink the
 * inventory. Whatever point this is interrupted at, no object exists that the saved inventory does not
 * list (invariant 2); a failed apply prunes nothing.
 */
import { refOfEntry } from '../core/inventory.ts';
import type { InventoryEntry } from '../api/packagesync.ts';
import type { Objects } from '../adapters/kube/objects.ts';
import type { Failure } from '../core/failure.ts';
import { refKey, refOf, type KubeObject, type ObjectRef } from '../core/object.ts';
import type { Change } from '../core/plan/changeset.ts';
import type { Owner } from '../core/plan/ownership.ts';
import type { ChangePlan } from '../core/plan/plan-changes.ts';
import { applyWaves } from './apply.ts';
import { pruneObjects } from './prune.ts';

export interface ActOptions {
  /** spec.prune / --prune: without it, objects that left the package are released, not deleted. */
  prune: boolean;
  impersonate?: string;
  force: boolean;
  signal: AbortSignal;
  concurrency: number;
  /**
   * Persists the inventory: old ∪ new before the first apply ('applying'), then what is left once the
   * prune is done ('pruned'). The first save must be durable before it returns.
   */
  saveInventory(entries: InventoryEntry[], phase: 'applying' | 'pruned'): Promise<void>;
}

export interface ActResult {
  /** created / configured / unchanged / pruned, per object handled. */
  changes: Change[];
  /** Objects as the server stored them after the apply. */
  stored: Map<string, KubeObject>;
  /** The first failure: of the apply (nothing was pruned), or of the prune (the rest is done). */
  failure?: Failure;
  /** Every apply failure of the failed wave (the CLI prints them all). */
  applyFailures: Failure[];
  pruned: ObjectRef[];
  /** The inventory as last saved. */
  inventory: InventoryEntry[];
}

export async function applyAndPrune(
  objects: Objects,
  plan: ChangePlan,
  live: Map<string, KubeObject>,
  owner: Owner,
  opts: ActOptions,
): Promise<ActResult> {
  await opts.saveInventory(plan.inventoryDuringApply, 'applying');
  const applied = await applyWaves(objects, plan.waves, (o) => plan.toApply.has(refKey(refOf(o))), {
    impersonate: opts.impersonate,
    force: opts.force,
    adopt: plan.adopt,
    signal: opts.signal,
    concurrency: opts.concurrency,
  });
  const changes: Change[] = [...applied.changes];
  if (applied.failures.length > 0) {
    return {
      changes,
      stored: applied.stored,
      failure: applied.failures[0],
      applyFailures: applied.failures,
      pruned: [],
      inventory: plan.inventoryDuringApply,
    };
  }

  const pruned = await pruneObjects(objects, opts.prune ? plan.prune : [], live, owner, {
    impersonate: opts.impersonate,
    signal: opts.signal,
  });
  for (const ref of pruned.pruned) changes.push({ ref, action: 'pruned' });
  // A failed delete keeps its entry so the next run retries it. With prune off, objects that left the
  // package are released from the inventory and left in the cluster, as Flux does.
  const kept = pruned.kept.flatMap((r) => plan.inventoryDuringApply.filter((e) => sameRef(e, r)));
  const inventory = [...plan.inventoryAfter, ...kept];
  await opts.saveInventory(inventory, 'pruned');
  return {
    changes,
    stored: applied.stored,
    ...(pruned.failure ? { failure: pruned.failure } : {}),
    applyFailures: [],
    pruned: pruned.pruned,
    inventory,
  };
}

function sameRef(entry: InventoryEntry, ref: ObjectRef): boolean {
  const r = refOfEntry(entry);
  return r.ok && refKey(r.value) === refKey(ref);
}
