/**
 * A settled package's periodic check, made cheap (docs/adr/0031-unchanged-checks-skip-render-and-plan.md).
 *
 * When a check finds a package settled (plan: nothing to apply or prune, all healthy, Ready), what it judged is
 * summed up in one digest, the checkpoint: the generation, the revision, the postBuild variables, the inventory,
 * and the uid and resourceVersion of every inventoried object. The next periodic check computes the same digest
 * from the controller's watches before rendering; equal means the render would give the same objects and the
 * plan would compare them with the same live copies, so it would find the package settled again: render and plan
 * are skipped. Anything that changed (a commit to the package's paths, a spec edit, a variable, an object edited,
 * deleted or re-created, its status moved by its controller) changes the digest and the check runs in full.
 */
import { createHash } from 'node:crypto';
import type { InventoryEntry } from '../inventory.ts';
import { refOfEntry } from '../inventory.ts';
import { refKey } from '../object.ts';

export interface CheckpointInput {
  generation: number | undefined;
  /** The revision the check works on (after package-revision.ts). */
  revision: string;
  /** What the render reads besides the source and the spec: the postBuild substitution (values hashed, never kept). */
  renderInputs: unknown;
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
  hash.update(`${input.generation ?? ''}\n${input.revision}\n${JSON.stringify(input.renderInputs ?? null)}\n`);
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

/** The digest of the postBuild substitution alone, for comparing it without keeping its values. */
export function renderInputsDigest(renderInputs: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(renderInputs ?? null))
    .digest('base64url');
}
