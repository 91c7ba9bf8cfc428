import type { InventoryEntry } from '../inventory.ts';
import { inventoryId, refOfEntry } from '../inventory.ts';
import type { KubeObject, ObjectRef } from '../object.ts';
import { refKey, refOf } from '../object.ts';
import { compareUtf8 } from '../render/canonical.ts';
import { kindRank } from './kind-order.ts';

/**
 * Objects in the previous inventory that the package no longer renders, in reverse apply order:
 * dependents first, Namespaces and CRDs last (deleting those first would cascade to everything
 * inside them before prune had checked each object's owner mark).
 * Entries that do not parse cannot name an object and are left out.
 */
export function planPrune(oldInventory: readonly InventoryEntry[], desired: readonly KubeObject[]): ObjectRef[] {
  const wanted = new Set(desired.map((obj) => inventoryId(refOf(obj))));
  const stale = new Map<string, ObjectRef>();
  for (const entry of oldInventory) {
    if (wanted.has(entry.id)) continue;
    const ref = refOfEntry(entry);
    if (ref.ok) stale.set(refKey(ref.value), ref.value);
  }
  return [...stale.values()].sort((a, b) => kindRank(b.kind) - kindRank(a.kind) || compareUtf8(refKey(a), refKey(b)));
}

/**
 * Kinds whose deletion takes more than the object with it: a Namespace everything in it, a CRD every custom
 * resource of its kind, a PersistentVolume or its claim the data. One that leaves the package is left in the
 * cluster and released from the inventory, unless spec.pruneProtectedKinds says to delete it too.
 */
export const PROTECTED_KINDS: readonly string[] = [
  '/Namespace',
  'apiextensions.k8s.io/CustomResourceDefinition',
  '/PersistentVolume',
  '/PersistentVolumeClaim',
];

export function isProtectedKind(ref: ObjectRef): boolean {
  return PROTECTED_KINDS.includes(`${ref.group}/${ref.kind}`);
}
