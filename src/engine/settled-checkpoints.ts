/**
 * Periodic checks of settled packages that skip render and plan when nothing changed
 * (core/plan/checkpoint.ts, docs/adr/0031-unchanged-checks-skip-render-and-plan.md).
 *
 * A check that finds its package settled remembers its checkpoint here; the next check of that PackageSync
 * (Ready at the revision its Inputs name) sums up its Inputs digest (engine/inputs.ts: every input of the
 * reconcile, Helm's valuesFrom and capabilities included) with the live copies the controller's watches hold and,
 * when the checkpoint is the same, stops before rendering. Only where the watches may answer: a PackageSync acting
 * as the controller in the controller's own cluster (objects.liveCache). A requested reconcile is always checked
 * in full, and so is every PackageSync once after a restart (the memory is this process's).
 */
import type { PackageSync, Spec } from '../api/packagesync.ts';
import type { Discovery } from '../adapters/kube/discovery.ts';
import type { LiveCache, WatchedPlace } from '../adapters/kube/live-cache.ts';
import type { BuildTool } from '../adapters/render/build.ts';
import { refOfEntry, type InventoryEntry } from '../core/inventory.ts';
import { refKey, type KubeObject, type ObjectRef } from '../core/object.ts';
import { checkpointOf } from '../core/plan/checkpoint.ts';
import { isReadyFor } from '../core/status.ts';

/**
 * What the settled check saw besides its checkpoint, for the next check to stop before even loading its
 * PackageSync (engine/unchanged-check.ts): kept only where that check can tell everything it skips is unchanged.
 */
export interface SettledFacts {
  /**
   * The PackageSync's resourceVersion: its status (inventory, Ready, revisions), annotations (a requested
   * reconcile) and deletion are as the settled check judged them while it is; its spec is `spec`.
   */
  resourceVersion: string;
  spec: Spec;
  intervalMs: number;
  /** The Inputs digest the settled check read (engine/inputs.ts): the next check reads its inputs again. */
  inputs: string;
  /** What the settled check learnt of its source: the same commit reads the same. */
  source: HeldSource;
  /** Every inventoried object's copy as the check judged it, and where the controller's watches hold it. */
  copies: readonly SettledCopy[];
}

/** What a run learnt of its source that the check before loading takes again for the same commit. */
export interface HeldSource {
  /** The commit the ref named. */
  commit: string;
  content: string;
  revision: string;
  tool: BuildTool;
}

/** An inventoried object's identity when its package was found settled, and the watch that holds its copy. */
export interface SettledCopy {
  place: WatchedPlace;
  uid: string;
  resourceVersion: string;
}

/** The last settled check's checkpoint of each PackageSync (by namespace/name, for its uid). */
export class SettledCheckpoints {
  private readonly byKey = new Map<string, { uid: string; checkpoint: string; facts?: SettledFacts }>();

  remember(ps: Readonly<PackageSync>, checkpoint: string | undefined, facts?: SettledFacts): void {
    const key = keyOf(ps);
    if (checkpoint === undefined || !ps.metadata.uid) this.byKey.delete(key);
    else this.byKey.set(key, { uid: ps.metadata.uid, checkpoint, ...(facts ? { facts } : {}) });
  }

  /** The settled check's facts of this PackageSync, with the uid they belong to. */
  facts(namespace: string, name: string): { uid: string; facts: SettledFacts } | undefined {
    const held = this.byKey.get(`${namespace}/${name}`);
    return held?.facts ? { uid: held.uid, facts: held.facts } : undefined;
  }

  get(ps: Readonly<PackageSync>): string | undefined {
    const held = this.byKey.get(keyOf(ps));
    return held && held.uid === ps.metadata.uid ? held.checkpoint : undefined;
  }

  /** The PackageSync is gone (the manager's watch): nothing of it is kept. */
  forget(namespace: string, name: string): void {
    this.byKey.delete(`${namespace}/${name}`);
  }

  get size(): number {
    return this.byKey.size;
  }
}

/** Where the live copies are read from: the controller's watches (an Objects whose liveCache is set). */
// (not ports.ts' PackageObjects: ports.ts names SettledCheckpoints, and the two would import each other)
interface LiveView {
  readonly discovery: Pick<Discovery, 'mapping'>;
  readonly liveCache: LiveCache | undefined;
}

/** What a check sums up besides the live copies. */
export interface CheckpointInputs {
  ps: Readonly<PackageSync>;
  /** The check's Inputs (engine/inputs.ts): their digest, and the revision they name. */
  inputs: { digest: string; revision: string };
  inventory: readonly InventoryEntry[];
}

/** Whether this check may be answered from a checkpoint at all (see the top of this file). */
export function mayUseCheckpoint(
  memory: SettledCheckpoints | undefined,
  objects: LiveView,
  trigger: string | undefined,
  c: CheckpointInputs,
): memory is SettledCheckpoints {
  return (
    memory !== undefined &&
    objects.liveCache !== undefined &&
    trigger === undefined &&
    c.inventory.length > 0 &&
    isReadyFor(c.ps.status, c.ps.metadata.generation) &&
    c.ps.status?.lastAppliedRevision === c.inputs.revision
  );
}

/** True when nothing this check would look at changed since the last check found the package settled. */
export async function unchangedSinceSettled(
  memory: SettledCheckpoints,
  objects: LiveView,
  c: CheckpointInputs,
): Promise<boolean> {
  const before = memory.get(c.ps);
  if (before === undefined) return false;
  const live = await watchedCopies(objects, c.inventory);
  return live !== undefined && checkpointOf(inputsOf(c, live)) === before;
}

/** A check found the package settled with these live copies: the next may stop before rendering. */
export function rememberSettled(
  memory: SettledCheckpoints,
  c: CheckpointInputs,
  live: ReadonlyMap<string, KubeObject>,
  facts?: SettledFacts,
): void {
  memory.remember(c.ps, checkpointOf(inputsOf(c, live)), facts);
}

function inputsOf(c: CheckpointInputs, live: ReadonlyMap<string, KubeObject>) {
  return { inputs: c.inputs.digest, inventory: c.inventory, live };
}

/**
 * The inventoried objects as the controller's watches hold them, or undefined as soon as one is not held (a
 * watch not running or not synced): the API server is never asked here, the full check does that. The copies
 * are only compared with those the settled check judged: equal uid and resourceVersion is the same state, so
 * a watch lagging behind our own apply needs no care here (live-cache.ts `peek`).
 */
async function watchedCopies(
  objects: LiveView,
  inventory: readonly InventoryEntry[],
): Promise<Map<string, KubeObject> | undefined> {
  const groups = byKindAndNamespace(inventory);
  if (!groups) return undefined;
  const live = new Map<string, KubeObject>();
  for (const refs of groups) {
    const { group, kind, namespace } = refs[0]!;
    const m = await objects.discovery.mapping(group, kind);
    if (!m || !objects.liveCache) return undefined;
    const found = await objects.liveCache.peek(m, m.namespaced ? namespace : '', refs);
    if (found.size < refs.length) return undefined;
    for (const r of refs) live.set(refKey(r), found.get(refKey(r))!);
  }
  return live;
}

const keyOf = (ps: Readonly<PackageSync>) => `${ps.metadata.namespace}/${ps.metadata.name}`;

/**
 * Where the controller's watches hold every inventoried object, with the identity the settled check judged
 * (`live`): what the next check compares before loading (unchanged-check.ts). Undefined when one is not held.
 */
export async function settledCopies(
  objects: LiveView,
  inventory: readonly InventoryEntry[],
  live: ReadonlyMap<string, KubeObject>,
): Promise<SettledCopy[] | undefined> {
  const groups = byKindAndNamespace(inventory);
  if (!groups || !objects.liveCache) return undefined;
  const copies: SettledCopy[] = [];
  for (const refs of groups) {
    const { group, kind, namespace } = refs[0]!;
    const m = await objects.discovery.mapping(group, kind);
    const places = m && (await objects.liveCache.places(m, m.namespaced ? namespace : '', refs));
    if (!places) return undefined;
    for (const [i, place] of places.entries()) {
      const { uid, resourceVersion } = live.get(refKey(refs[i]!))?.metadata ?? {};
      if (!uid || !resourceVersion) return undefined;
      copies.push({ place, uid, resourceVersion });
    }
  }
  return copies;
}

/** True when every copy the watches hold now is the one the settled check judged (same uid and resourceVersion). */
export function sameCopies(objects: LiveView, copies: readonly SettledCopy[]): boolean {
  const cache = objects.liveCache;
  if (!cache) return false;
  for (const c of copies) {
    const now = cache.held(c.place)?.metadata;
    if (now?.uid !== c.uid || now.resourceVersion !== c.resourceVersion) return false;
  }
  return true;
}

/** The inventory's objects by kind and namespace (one watch each), or undefined for an entry naming none. */
function byKindAndNamespace(inventory: readonly InventoryEntry[]): ObjectRef[][] | undefined {
  const groups = new Map<string, ObjectRef[]>();
  for (const entry of inventory) {
    const ref = refOfEntry(entry);
    if (!ref.ok) return undefined;
    const k = `${ref.value.group}/${ref.value.kind}/${ref.value.namespace}`;
    const refs = groups.get(k);
    if (refs) refs.push(ref.value);
    else groups.set(k, [ref.value]);
  }
  return [...groups.values()];
}
