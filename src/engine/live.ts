/**
 * Reads the live copies the planner needs, in as few requests as the data allows:
 * - one labelled LIST per (kind, namespace) the inventory lists objects in finds every object this
 *   PackageSync already owns (a new package costs no LIST, only the reads below);
 * - desired objects that LIST did not return may exist unowned (adopt) or owned by another PackageSync
 *   (conflict): a few are read with GET; many in one (kind, namespace) with one unlabelled LIST instead.
 *   This includes objects already in the inventory: one another PackageSync took over (both applied it
 *   at once) carries its labels, not ours, and must be seen as a conflict, not re-taken by our next
 *   apply — otherwise the two would take it from each other on every reconcile.
 * The controller answers what it can from its shared watches first (objects.liveCache, adapters/kube/live-cache.ts):
 * a settled package's periodic check then costs no request. What the watches do not hold is read as above,
 * except a new object the caller may create unread (core/plan/create-only.ts) that a synced owned-objects
 * watch shows no PackageSync owns: it is not read at all, but listed in `unverified`, and its apply is sent
 * create-only (docs/adr/0029). Almost every such read answered 404: a new unit of a fleet costs no GET.
 * Nothing here decides; src/core/plan does.
 */
import { refOfEntry } from '../core/inventory.ts';
import type { InventoryEntry } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import type { PackageObjects } from './ports.ts';
import type { ResourceMapping } from '../adapters/kube/discovery.ts';
import { errorText, fail, ok, type Result } from '../core/failure.ts';
import { refKey, refOf, type KubeObject, type ObjectRef } from '../core/object.ts';
import { ownershipOf } from '../core/plan/ownership.ts';

/** Above this many new objects in one (kind, namespace), one LIST is cheaper than GETs. */
const LIST_INSTEAD_OF_GETS = 20;

export interface LiveState {
  /** refKey → live object, for every desired or inventoried object that exists. */
  byKey: Map<string, KubeObject>;
  /** Inventory refs whose kind the cluster no longer serves (their CRD is gone). */
  unknownKinds: ObjectRef[];
  /**
   * refKeys of new desired objects not read: no PackageSync owns them (the watches say), so each either does
   * not exist or exists unowned. Absent from byKey; their apply must be create-only.
   */
  unverified: Set<string>;
}

export async function readLiveState(
  objects: PackageObjects,
  desired: readonly KubeObject[],
  inventory: readonly InventoryEntry[],
  opts: { signal?: AbortSignal; mayCreateUnread?: (obj: KubeObject) => boolean },
): Promise<Result<LiveState>> {
  const createUnread = opts.mayCreateUnread;
  const eligible = new Set(createUnread ? desired.filter((o) => createUnread(o)).map((o) => refKey(refOf(o))) : []);
  const unverified = new Set<string>();
  const inInventory = new Set<string>();
  const groups = new Map<
    string,
    { group: string; kind: string; namespace: string; refs: ObjectRef[]; fresh: ObjectRef[]; desired: ObjectRef[] }
  >();
  const group = (ref: ObjectRef) => {
    const k = `${ref.group}/${ref.kind}/${ref.namespace}`;
    let g = groups.get(k);
    if (!g) {
      g = { group: ref.group, kind: ref.kind, namespace: ref.namespace, refs: [], fresh: [], desired: [] };
      groups.set(k, g);
    }
    return g;
  };
  for (const entry of inventory) {
    const r = refOfEntry(entry);
    if (!r.ok) continue; // a malformed entry cannot name an object: nothing to read or prune
    inInventory.add(refKey(r.value));
    group(r.value).refs.push(r.value);
  }
  for (const obj of desired) {
    const ref = refOf(obj);
    const g = group(ref);
    g.desired.push(ref);
    if (!inInventory.has(refKey(ref))) {
      g.refs.push(ref);
      g.fresh.push(ref);
    }
  }

  const byKey = new Map<string, KubeObject>();
  const unknownKinds: ObjectRef[] = [];
  try {
    await Promise.all(
      [...groups.values()].map(async (g) => {
        const m: ResourceMapping | undefined = await objects.discovery.mapping(g.group, g.kind);
        if (!m) {
          // A desired object of a kind whose CRD is in this package: it does not exist yet.
          const fresh = new Set(g.fresh);
          unknownKinds.push(...g.refs.filter((r) => !fresh.has(r)));
          return;
        }
        const ns = m.namespaced ? g.namespace : '';
        // The labelled LIST finds what the inventory lists; a kind and namespace the inventory has nothing
        // in (a new package, a new kind) holds nothing to find that the reads below would not. The watches'
        // copies stand in for it when they hold every inventoried object that left the package (see above).
        const inventoried = g.refs.length > g.fresh.length;
        const listNeeded = inventoried && !(await fromCache(objects, m, ns, g, byKey));
        const owned = listNeeded ? await objects.listOwned(m, ns, opts) : [];
        for (const o of owned)
          byKey.set(refKey(refOf({ ...o, metadata: { ...o.metadata, namespace: o.metadata.namespace ?? '' } })), o);
        const unseen = await withoutUnowned(
          objects,
          m,
          ns,
          g.desired.filter((r) => !byKey.has(refKey(r))),
          (r) => eligible.has(refKey(r)) && !inInventory.has(refKey(r)),
          unverified,
        );
        if (unseen.length > LIST_INSTEAD_OF_GETS) {
          const all = await objects.list(m, ns, '', opts);
          const wanted = new Set(unseen.map(refKey));
          for (const o of all) {
            const k = refKey({
              group: g.group,
              kind: g.kind,
              namespace: o.metadata.namespace ?? '',
              name: o.metadata.name,
            });
            if (wanted.has(k)) byKey.set(k, o);
          }
        } else {
          await Promise.all(
            unseen.map(async (r) => {
              const o = await objects.get(r, opts);
              if (o) byKey.set(refKey(r), o);
            }),
          );
        }
      }),
    );
  } catch (e) {
    const status = (e as { status?: number }).status;
    if (status === 403) return fail(Reason.Forbidden, `reading live objects: forbidden: ${errorText(e)}`);
    return fail(Reason.ApplyFailed, `reading live objects: ${errorText(e)}`);
  }
  return ok({ byKey, unknownKinds, unverified });
}

/**
 * `unseen` without the new objects the watches show no PackageSync owns (those go to `unverified`): only a
 * synced owned-objects watch that already runs answers; without one, everything is read as before.
 */
async function withoutUnowned(
  objects: PackageObjects,
  m: ResourceMapping,
  namespace: string,
  unseen: ObjectRef[],
  mayCreateUnread: (r: ObjectRef) => boolean,
  unverified: Set<string>,
): Promise<ObjectRef[]> {
  const candidates = unseen.filter(mayCreateUnread);
  if (!objects.liveCache || candidates.length === 0) return unseen;
  const nobodys = await objects.liveCache.unowned(m, namespace, candidates);
  if (!nobodys) return unseen;
  for (const k of nobodys) unverified.add(k);
  return unseen.filter((r) => !nobodys.has(refKey(r)));
}

/**
 * Fills `byKey` with what the controller's watches hold of this group's objects: a desired object whatever its
 * owner (as a GET would find it), an inventoried one no longer desired only when it is ours (as the labelled LIST
 * would). True when that leaves nothing the labelled LIST must find; desired objects the cache lacks are read
 * by the caller either way.
 */
async function fromCache(
  objects: PackageObjects,
  m: ResourceMapping,
  namespace: string,
  g: { refs: ObjectRef[]; desired: ObjectRef[] },
  byKey: Map<string, KubeObject>,
): Promise<boolean> {
  if (!objects.liveCache) return false;
  const desired = new Set(g.desired.map(refKey));
  const cached = await objects.liveCache.lookup(m, namespace, [
    ...g.desired,
    ...g.refs.filter((r) => !desired.has(refKey(r))),
  ]);
  let complete = true;
  for (const r of g.desired) {
    const o = cached.get(refKey(r));
    if (o) byKey.set(refKey(r), o);
  }
  for (const r of g.refs) {
    if (desired.has(refKey(r))) continue;
    const o = cached.get(refKey(r));
    if (!o) complete = false;
    else if (ownershipOf(o, objects.owner) === 'ours') byKey.set(refKey(r), o);
  }
  return complete;
}
