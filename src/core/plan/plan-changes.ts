/**
 * Step 4: desired × inventory × live → what to apply, in which order (the dependency graph), and what
 * to prune. Pure: the live copies were read by the engine; this decides.
 */
import { entryOf, mergeInventories, refOfEntry } from '../inventory.ts';
import type { InventoryEntry } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';
import { describeRef, refKey, refOf, type KubeObject, type ObjectRef } from '../object.ts';
import { appliedAsIs, driftedPaths, needsApply, withDigest } from './drift.ts';
import type { Drift } from './drift-report.ts';
import { ignoredPointers, type IgnoreRule } from './ignore.ts';
import { sentWithLiveFields } from './create-only.ts';
import { ownershipOf, type Owner } from './ownership.ts';
import { isProtectedKind, planPrune } from './prune.ts';
import { buildGraph, describeObject, type DependencyGraph } from './graph.ts';
import { decideApply, type ApplyDecision } from './object-policy.ts';

export interface ChangePlan {
  /** Objects to send, as they will be sent (digest annotation stamped), and what each needs first. */
  graph: DependencyGraph;
  /** refKeys of objects whose live copy differs from the package (or is missing). */
  toApply: Set<string>;
  /**
   * refKeys of live objects no PackageSync owns yet, named by the package: adopting them is the user's
   * explicit intent, so their apply takes over fields other managers set (docs/adr/0006).
   */
  adopt: Set<string>;
  /**
   * Objects of the inventory that differ from the package at a revision already applied to them (the live copy
   * carries this object's digest) or were deleted: changed in the cluster, not in git. With driftPolicy Correct
   * they are in toApply and their fields are taken back (`takeBack`); with Detect they are only reported.
   */
  drifted: Drift[];
  /** refKeys whose apply may take back, with force, fields another manager took: drift (docs/adr/0022). */
  takeBack: Set<string>;
  /**
   * refKeys of objects annotated apply Ignore (object-policy.ts): never applied, never in health. Those whose
   * package copy says so are also left out of the inventory, so neither prune nor teardown can reach them.
   */
  ignored: Set<string>;
  /** refKeys of objects opted in to delete and re-create on an immutable-field change (packagesync.io/recreate). */
  recreate: Set<string>;
  /** Inventory entries no longer rendered, in delete order. */
  prune: ObjectRef[];
  /** Protected kinds (prune.ts) that left the package: left in the cluster, dropped from the inventory. */
  released: ObjectRef[];
  /**
   * refKeys of new objects sent create-only because they were not read (engine/live.ts, docs/adr/0029): a refused
   * create is read and decided then (create-only.ts). Empty from planChanges; the engine fills it.
   */
  createOnly: Set<string>;
  /** The inventory to save before applying: old ∪ new, so a crash leaves nothing unknown. */
  inventoryDuringApply: InventoryEntry[];
  /** The inventory once everything applied and pruned. */
  inventoryAfter: InventoryEntry[];
}

export interface PlanOptions {
  /** refKey → source file (RenderedPackage.sources): validation messages name the file. */
  sources?: ReadonlyMap<string, string>;
  /**
   * Live copies of the objects depends-on names outside the package (engine/dependencies.ts): such a
   * dependency must exist. One that left the package does not count: it is about to be pruned.
   */
  external?: ReadonlyMap<string, KubeObject>;
  /** spec.pruneProtectedKinds: Namespaces, CRDs, PVs and PVCs that left the package are deleted too. */
  pruneProtectedKinds?: boolean;
  /** spec.driftPolicy (default Correct). */
  driftPolicy?: 'Correct' | 'Detect';
  /** spec.ignore; the packagesync.io/ignore-fields annotation is read from the objects. */
  ignore?: readonly IgnoreRule[];
}

export function planChanges(
  desired: readonly KubeObject[],
  inventory: readonly InventoryEntry[],
  live: ReadonlyMap<string, KubeObject>,
  owner: Owner,
  opts: PlanOptions = {},
): Result<ChangePlan> {
  const decided = decidePolicies(desired, live, opts.sources);
  if (!decided.ok) return decided;
  const policies = decided.value;
  const conflicts: string[] = [];
  const adopt = new Set<string>();
  let firstConflict: ObjectRef | undefined;
  for (const obj of desired) {
    const ref = refOf(obj);
    const current = live.get(refKey(ref));
    if (!current || policies.get(refKey(ref))!.ignored) continue; // never touched: nothing to conflict over
    const who = ownershipOf(current, owner);
    if (who === 'unowned') adopt.add(refKey(ref));
    if (typeof who === 'object') {
      firstConflict ??= ref;
      conflicts.push(`${describeRef(ref)} belongs to PackageSync ${who.otherOwner.namespace}/${who.otherOwner.name}`);
    }
  }
  if (conflicts.length > 0) {
    return fail(
      Reason.OwnershipConflict,
      `${conflicts.slice(0, 5).join('; ')}${conflicts.length > 5 ? `; and ${conflicts.length - 5} more` : ''}: remove it from this package or from the other one`,
      { object: firstConflict!, terminal: true },
    );
  }
  const stale = planPrune(inventory, desired);
  const leaving = new Set(stale.map(refKey));
  const prune = opts.pruneProtectedKinds ? stale : stale.filter((r) => !isProtectedKind(r));
  const released = opts.pruneProtectedKinds ? [] : stale.filter(isProtectedKind);
  const ignoredFields = new Map(desired.map((o) => [o, ignoredPointers(o, live.get(refKey(refOf(o))), opts.ignore)]));
  const sent = desired.map((o) => sentWithLiveFields(withDigest(o), live.get(refKey(refOf(o))), ignoredFields.get(o)!));
  const graph = buildGraph(sent, {
    sources: opts.sources,
    leaving: (ref) => leaving.has(refKey(ref)),
    exists: (ref) => opts.external?.has(refKey(ref)) === true,
  });
  if (!graph.ok) return { ok: false, failure: graph.failure };
  const toApply = new Set<string>();
  const takeBack = new Set<string>();
  const drifted: Drift[] = [];
  const ignored = new Set<string>();
  const recreate = new Set<string>();
  const inventoried = new Set(
    inventory.flatMap((e) => {
      const r = refOfEntry(e);
      return r.ok ? [refKey(r.value)] : [];
    }),
  );
  const detect = opts.driftPolicy === 'Detect';
  for (const obj of desired) {
    const ref = refOf(obj);
    const key = refKey(ref);
    const policy = policies.get(key)!;
    if (policy.ignored) ignored.add(key);
    if (policy.recreate) recreate.add(key);
    if (policy.action === 'leave') continue;
    const current = live.get(key);
    const pointers = ignoredFields.get(obj)!;
    if (!needsApply(obj, current, pointers)) continue;
    const drift = inventoried.has(key) && (!current || appliedAsIs(obj, current));
    if (drift) {
      drifted.push({ ref, paths: current ? driftedPaths(obj, current, pointers) : [], missing: !current });
      if (detect) continue;
      if (current) takeBack.add(key);
    }
    toApply.add(key);
  }
  const next = desired.filter((obj) => !policies.get(refKey(refOf(obj)))!.released).map(entryOf);
  return ok({
    graph: graph.value,
    toApply,
    adopt,
    drifted,
    takeBack,
    ignored,
    recreate,
    prune,
    released,
    createOnly: new Set(),
    inventoryDuringApply: mergeInventories(inventory, next),
    inventoryAfter: mergeInventories([], next),
  });
}

/** Each object's policy annotations (object-policy.ts); the first unreadable one fails the plan, naming its file. */
function decidePolicies(
  desired: readonly KubeObject[],
  live: ReadonlyMap<string, KubeObject>,
  sources: ReadonlyMap<string, string> | undefined,
): Result<Map<string, ApplyDecision>> {
  const decisions = new Map<string, ApplyDecision>();
  for (const obj of desired) {
    const ref = refOf(obj);
    const decision = decideApply(obj, live.get(refKey(ref)));
    if (!decision.ok) {
      const message = `${describeObject(ref, sources)}: ${decision.failure.message}; fix the annotation in the package`;
      return fail(decision.failure.reason, message, { object: ref, terminal: true });
    }
    decisions.set(refKey(ref), decision.value);
  }
  return ok(decisions);
}
