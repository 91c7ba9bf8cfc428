/**
 * The churn soak's end-of-run verdict (issue 18 item 6), on plain data: what the harness knows each live
 * unit's package renders (its model of the git fixture), what every PackageSync's status says, and which
 * objects labelled as ours live in the cluster. Pure, so the rules are unit-tested (test/bench/) apart from
 * the hour it takes to produce real input.
 */

/** A PackageSync as the cluster has it at the end of the run. */
export interface UnitState {
  name: string;
  /** status.inventory.entries[].id */
  inventory: string[];
  ready: boolean;
  /** Ready's reason and message when not Ready (named in the violation). */
  readyReason?: string;
  generation: number;
  observedGeneration?: number;
  lastAppliedRevision?: string;
  /** metadata.deletionTimestamp is set: the harness deleted it and the finalizer has not finished. */
  deleting: boolean;
}

/** A live object that carries our owner labels. */
export interface LiveObject {
  /** Inventory id: `<namespace>_<name>_<group>_<kind>`. */
  id: string;
  /** The packagesync.io/name label. */
  owner: string;
  /** What the harness compares with the package (e.g. the ConfigMap's data), when it knows. */
  content?: string;
}

/** What the harness committed for a unit it keeps: the objects, and the revision that last changed them. */
export interface ExpectedUnit {
  name: string;
  /** Inventory id → the content it should have (undefined: existence only). */
  objects: Map<string, string | undefined>;
  /**
   * `main@sha1:<commit>` of the commit that last changed the unit's path, then of every later one: a unit
   * reports the commit at which it saw its package change (or was created), and keeps it while later commits
   * leave its path alone (docs/monorepos.md), so any of them is its latest revision.
   */
  revisions: readonly string[];
}

export interface SoakState {
  expected: readonly ExpectedUnit[];
  /** Every PackageSync in the soak's namespace. */
  units: readonly UnitState[];
  /** Units the harness deleted: their PackageSync must be gone, and with it their objects. */
  deleted: readonly string[];
  live: readonly LiveObject[];
}

export type ViolationKind =
  | 'orphan' // labelled as ours, named by no inventory
  | 'wrong-delete' // a live unit's package renders it, it does not exist
  | 'inventory-mismatch' // an inventory names an object that does not exist, or another unit's
  | 'stale-content' // exists, but not with the content of the unit's latest revision
  | 'not-ready' // not Ready, or Ready at an older revision or generation
  | 'stuck-deletion' // deleted by the harness, still there
  | 'unexpected-unit'; // a PackageSync the harness never created or already deleted and forgot

export interface Violation {
  kind: ViolationKind;
  /** The unit (PackageSync) and, when it is about one object, the object's inventory id. */
  unit: string;
  object?: string;
  detail: string;
}

export function checkSoak(s: SoakState): Violation[] {
  const out: Violation[] = [];
  const units = new Map(s.units.map((u) => [u.name, u]));
  const liveById = new Map(s.live.map((o) => [o.id, o]));
  const expectedByName = new Map(s.expected.map((e) => [e.name, e]));
  const deleted = new Set(s.deleted);
  const inventoried = new Map<string, string>();
  for (const u of s.units) for (const id of u.inventory) inventoried.set(id, u.name);

  for (const e of s.expected) {
    const u = units.get(e.name);
    if (!u) {
      out.push({ kind: 'wrong-delete', unit: e.name, detail: 'the PackageSync is gone, the harness never deleted it' });
      continue;
    }
    if (!u.ready)
      out.push({ kind: 'not-ready', unit: e.name, detail: `Ready is not True (${u.readyReason ?? 'no condition'})` });
    else if (u.observedGeneration !== u.generation)
      out.push({
        kind: 'not-ready',
        unit: e.name,
        detail: `observedGeneration ${u.observedGeneration ?? 'unset'} ≠ generation ${u.generation}`,
      });
    else if (!e.revisions.includes(u.lastAppliedRevision ?? ''))
      out.push({
        kind: 'not-ready',
        unit: e.name,
        detail: `lastAppliedRevision ${u.lastAppliedRevision ?? 'unset'}: its package last changed at ${e.revisions[0]}`,
      });
    for (const [id, content] of e.objects) {
      const o = liveById.get(id);
      if (!o) out.push({ kind: 'wrong-delete', unit: e.name, object: id, detail: 'rendered by the package, not live' });
      else if (content !== undefined && o.content !== content)
        out.push({
          kind: 'stale-content',
          unit: e.name,
          object: id,
          detail: `live ${o.content ?? 'unknown'}, package says ${content}`,
        });
    }
    // the inventory is exactly what lives for the unit: every entry exists and carries this unit's label
    const inventory = new Set(u.inventory);
    for (const id of inventory) {
      const o = liveById.get(id);
      if (!o) out.push({ kind: 'inventory-mismatch', unit: e.name, object: id, detail: 'in the inventory, not live' });
      else if (o.owner !== e.name)
        out.push({
          kind: 'inventory-mismatch',
          unit: e.name,
          object: id,
          detail: `in the inventory, labelled as ${o.owner}'s`,
        });
    }
    // labelled as this unit's but in another unit's inventory (in none at all: an orphan, below)
    for (const o of s.live) {
      const holder = inventoried.get(o.id);
      if (o.owner === e.name && holder !== undefined && holder !== e.name)
        out.push({
          kind: 'inventory-mismatch',
          unit: e.name,
          object: o.id,
          detail: `labelled as its own, in ${holder}'s inventory`,
        });
    }
    for (const id of inventory)
      if (!e.objects.has(id))
        out.push({
          kind: 'inventory-mismatch',
          unit: e.name,
          object: id,
          detail: 'in the inventory, not in the package',
        });
  }

  for (const u of s.units) {
    if (expectedByName.has(u.name)) continue;
    if (deleted.has(u.name))
      out.push({
        kind: 'stuck-deletion',
        unit: u.name,
        detail: u.deleting
          ? 'deleted, its finalizer has not finished'
          : 'deleted, still there without deletionTimestamp',
      });
    else out.push({ kind: 'unexpected-unit', unit: u.name, detail: 'a PackageSync the harness does not know' });
  }

  for (const o of s.live)
    if (!inventoried.has(o.id))
      out.push({
        kind: 'orphan',
        unit: o.owner,
        object: o.id,
        detail: deleted.has(o.owner) ? 'left behind by a deleted unit' : 'labelled as ours, in no inventory',
      });
  return out;
}

/** Counts by kind, every kind present (0 when none), in a stable order for the report. */
export function countByKind(violations: readonly Violation[]): Record<ViolationKind, number> {
  const kinds: ViolationKind[] = [
    'orphan',
    'wrong-delete',
    'inventory-mismatch',
    'stale-content',
    'not-ready',
    'stuck-deletion',
    'unexpected-unit',
  ];
  const out = Object.fromEntries(kinds.map((k) => [k, 0])) as Record<ViolationKind, number>;
  for (const v of violations) out[v.kind]++;
  return out;
}

export const describe = (v: Violation): string => `${v.kind}: ${v.unit}${v.object ? ` ${v.object}` : ''}: ${v.detail}`;
