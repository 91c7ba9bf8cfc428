/**
 * A settled package's periodic check, made cheap (docs/adr/0031-unchanged-checks-skip-render-and-plan.md).
 *
 * When a check finds a package settled (plan: nothing to apply or prune, all healthy, Ready), what it judged is
 * summed up in one digest, the checkpoint: the run's Inputs digest (every input of the reconcile, core/inputs.ts),
 * the inventory, and the uid and resourceVersion of every inventoried object. The next periodic check computes the same digest
 * from the controller's watches before rendering; equal means the render would give the same objects and the
 * plan would compare them with the same live copies, so it would find the package settled again: render and plan
 * are skipped. Anything that changed (any input: a commit to the package's paths, a spec edit, a variable, Helm
 * values; or an object edited, deleted or re-created, its status moved by its controller) changes the digest and
 * the check runs in full.
 */
import { createHash } from 'node:crypto';
import type { InventoryEntry } from '../inventory.ts';
import { refOfEntry } from '../inventory.ts';
import { refKey } from '../object.ts';

export interface CheckpointInput {
  /** The check's Inputs digest (core/inputs.ts): every input of the reconcile, the only part that names them. */
  inputs: string;
  inventory: readonly InventoryEntry[];
  /** refKey → the live copy's identity, for the inventoried objects the check could see. */
  live: ReadonlyMap<string, { metadata: { uid?: string; resourceVersion?: string } }>;
}

/**
 * The digest of what a check saw, or undefined when it cannot be summed up: an inventory entry that names no
 * object, or an inventoried object with no live copy (deleted, or a watch that does not hold it). Such a package
 * is always checked in full.
 */
export function checkpointOf(input: CheckpointInput): string | undefined {
  const hash = createHash('sha256');
  hash.update(`${input.inputs}\n`);
  for (const entry of input.inventory) {
    const ref = refOfEntry(entry);
    if (!ref.ok) return undefined;
    const live = input.live.get(refKey(ref.value));
    const { uid, resourceVersion } = live?.metadata ?? {};
    if (!uid || !resourceVersion) return undefined;
    hash.update(`${entry.id} ${entry.v} ${uid} ${resourceVersion}\n`);
  }
  return hash.digest('base64url');
}
