import type { InventoryEntry } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import type { KubeObject, ObjectRef } from './object.ts';
import { refOf, versionOf } from './object.ts';
import type { Result } from './failure.ts';
import { fail, ok } from './failure.ts';

export type { InventoryEntry };

/**
 * The inventory in status: every object this PackageSync applied, in the same format as Flux's
 * kustomize-controller (cli-utils ObjMetadata), so tools that read one can read the other.
 */
export interface InventoryDiff {
  /** In the new inventory only. */
  added: InventoryEntry[];
  /** In the old inventory only: the prune candidates. */
  removed: InventoryEntry[];
}

const separator = '_';
// RBAC names may contain ':', which cli-utils stores as '__' (the only names allowed to contain it).
const colonTranscoded = '__';
const rbacGroup = 'rbac.authorization.k8s.io';
const rbacKinds = new Set(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);

export function inventoryId(ref: ObjectRef): string {
  const name =
    ref.group === rbacGroup && rbacKinds.has(ref.kind) ? ref.name.replaceAll(':', colonTranscoded) : ref.name;
  return [ref.namespace, name, ref.group, ref.kind].join(separator);
}

export function entryOf(obj: KubeObject): InventoryEntry {
  return { id: inventoryId(refOf(obj)), v: versionOf(obj.apiVersion) };
}

/** Parses an entry id the way cli-utils does: namespace first, then kind and group from the end. */
export function refOfEntry(entry: InventoryEntry): Result<ObjectRef> {
  const { id } = entry;
  const first = id.indexOf(separator);
  const last = id.lastIndexOf(separator);
  const beforeLast = last > first ? id.lastIndexOf(separator, last - 1) : -1;
  if (first < 0 || beforeLast <= first) return malformed(id);
  const namespace = id.slice(0, first);
  const name = id.slice(first + 1, beforeLast).replaceAll(colonTranscoded, ':');
  const group = id.slice(beforeLast + 1, last);
  const kind = id.slice(last + 1);
  if (!name || !kind || name.includes(separator)) return malformed(id);
  return ok({ group, kind, namespace, name });
}

function malformed(id: string): Result<ObjectRef> {
  return fail(
    Reason.InternalError,
    `status.inventory entry ${JSON.stringify(id)} is not <namespace>_<name>_<group>_<kind>; ` +
      'remove the entry from status or let the next successful apply rewrite the inventory',
    { terminal: true },
  );
}

function compareIds(a: InventoryEntry, b: InventoryEntry): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Sorted by id so that the stored inventory does not change when only the render order does. */
export function sortEntries(entries: readonly InventoryEntry[]): InventoryEntry[] {
  return [...entries].sort(compareIds);
}

/**
 * old ∪ new, saved before any apply so that a crash mid-apply leaves no object unknown to the
 * inventory. An object in both keeps the new version.
 */
export function mergeInventories(old: readonly InventoryEntry[], next: readonly InventoryEntry[]): InventoryEntry[] {
  const byId = new Map<string, InventoryEntry>();
  for (const entry of old) byId.set(entry.id, entry);
  for (const entry of next) byId.set(entry.id, entry);
  return sortEntries([...byId.values()]);
}

/** The same objects at the same versions, whatever the order: saving one over the other changes nothing. */
export function sameInventory(a: readonly InventoryEntry[], b: readonly InventoryEntry[]): boolean {
  if (a.length !== b.length) return false;
  const versions = new Map(a.map((e) => [e.id, e.v]));
  return versions.size === a.length && b.every((e) => versions.get(e.id) === e.v);
}

/** Compares by id only: a version change is not an addition or a removal. */
export function inventoryDiff(old: readonly InventoryEntry[], next: readonly InventoryEntry[]): InventoryDiff {
  const oldIds = new Set(old.map((e) => e.id));
  const nextIds = new Set(next.map((e) => e.id));
  return {
    added: sortEntries(dedupe(next.filter((e) => !oldIds.has(e.id)))),
    removed: sortEntries(dedupe(old.filter((e) => !nextIds.has(e.id)))),
  };
}

function dedupe(entries: InventoryEntry[]): InventoryEntry[] {
  const byId = new Map<string, InventoryEntry>();
  for (const entry of entries) byId.set(entry.id, entry);
  return [...byId.values()];
}

/** The apiVersion to address an entry's object with, e.g. for a delete: `apps/v1`, `v1`. */
export function apiVersionOfEntry(ref: ObjectRef, entry: InventoryEntry): string {
  return ref.group ? `${ref.group}/${entry.v}` : entry.v;
}
