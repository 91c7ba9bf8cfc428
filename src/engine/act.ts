/**
 * Step 5, shared by the controller's reconcile and `packagesync apply`: save the inventory as old ∪ new,
 * apply over the dependency graph (best effort: a failure holds back only its dependents), and only
 * after every apply succeeded prune what left the package (in reverse graph order) and shrink the
 * inventory. Whatever point this is interrupted at, no object exists that the saved inventory does not
 * list (invariant 2); a failed apply prunes nothing.
 */
import { refOfEntry, type InventoryEntry } from '../core/inventory.ts';
import type { PackageObjects } from './ports.ts';
import { ok, type Failure, type Result } from '../core/failure.ts';
import { refKey, refOf, type KubeObject, type ObjectRef } from '../core/object.ts';
import type { HealthRules } from '../core/health/index.ts';
import type { Change } from '../core/plan/changeset.ts';
import type { ChangePlan } from '../core/plan/plan-changes.ts';
import { summarizeApplyFailures } from '../core/plan/apply-failures.ts';
import { applyGraph } from './apply.ts';
import { pruneObjects } from './prune.ts';

export interface ActOptions {
  /** spec.prune / --prune: without it, objects that left the package are released, not deleted. */
  prune: boolean;
  force: boolean;
  signal: AbortSignal;
  concurrency: number;
  /** refKey → source file, for messages. */
  sources?: ReadonlyMap<string, string>;
  /** spec.healthCheckExprs, compiled (a depends-on dependency's health). */
  healthRules?: HealthRules;
}

/** What the act step tells its caller while it works: the reconcile's run context, or the CLI. */
export interface ActProgress {
  /**
   * Persists the inventory: old ∪ new before the first apply ('applying'), then what is left once the
   * prune is done ('pruned'). The first save must be durable before it returns.
   */
  saveInventory(entries: InventoryEntry[], phase: 'applying' | 'pruned'): Promise<void>;
  /** Objects handled: created / configured / unchanged after the apply, pruned after the prune. */
  handled(changes: readonly Change[]): void;
  /**
   * Every failure of a best-effort apply, in apply order: objects that failed and objects skipped because
   * something they need failed (DependencyFailed). The Result carries them summed up, the first heading.
   */
  applyFailed?(failures: readonly Failure[]): void;
}

export interface Acted {
  /** Objects as the server stored them after the apply. */
  stored: Map<string, KubeObject>;
  pruned: ObjectRef[];
  /** The inventory as last saved. */
  inventory: InventoryEntry[];
  /** refKey → managers whose fields a drift correction took back. */
  takenBack: Map<string, string[]>;
  /** refKeys of objects found only when applied whose live copy says apply Ignore: left alone, not in health. */
  ignored: Set<string>;
}

/** Fails with the apply's failures summed up (nothing pruned), or the prune's failure (everything else done). */
export async function applyAndPrune(
  objects: PackageObjects,
  plan: ChangePlan,
  live: ReadonlyMap<string, KubeObject>,
  opts: ActOptions,
  progress: ActProgress,
): Promise<Result<Acted>> {
  await progress.saveInventory(plan.inventoryDuringApply, 'applying');
  const applied = await applyGraph(objects, plan.graph, (o) => plan.toApply.has(refKey(refOf(o))), {
    force: opts.force,
    adopt: plan.adopt,
    createOnly: plan.createOnly,
    owner: objects.owner,
    takeBack: plan.takeBack,
    recreate: plan.recreate,
    signal: opts.signal,
    concurrency: opts.concurrency,
    live,
    sources: opts.sources,
    ...(opts.healthRules ? { healthRules: opts.healthRules } : {}),
  });
  progress.handled(applied.changes);
  if (applied.failures.length > 0) {
    progress.applyFailed?.(applied.failures);
    return { ok: false, failure: summarizeApplyFailures(applied.failures) };
  }

  const pruned = await pruneObjects(objects, opts.prune ? plan.prune : [], live, { signal: opts.signal });
  progress.handled(pruned.pruned.map((ref) => ({ ref, action: 'pruned' as const })));
  // A failed delete keeps its entry so the next run retries it. With prune off, objects that left the
  // package are released from the inventory and left in the cluster, as Flux does.
  const kept = pruned.kept.flatMap((r) => plan.inventoryDuringApply.filter((e) => sameRef(e, r)));
  const inventory = [...plan.inventoryAfter, ...kept];
  await progress.saveInventory(inventory, 'pruned');
  if (pruned.failure) return { ok: false, failure: pruned.failure };
  return ok({
    stored: applied.stored,
    pruned: pruned.pruned,
    inventory,
    takenBack: applied.takenBack,
    ignored: applied.ignored,
  });
}

function sameRef(entry: InventoryEntry, ref: ObjectRef): boolean {
  const r = refOfEntry(entry);
  return r.ok && refKey(r.value) === refKey(ref);
}
