/**
 * A new object of the package that no PackageSync owns, as far as the controller's synced owned-objects watches
 * can tell, is not read before it is applied (docs/adr/0029): its apply is sent create-only, so it creates the
 * object or is refused without writing anything. Only on that refusal (the object exists after all: unowned,
 * or owned by a PackageSync the watch has not shown yet) is it read, and decided here exactly as the plan
 * decides an object it found live (plan-changes.ts): adopt it, leave it alone, or refuse with
 * OwnershipConflict.
 */
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';
import { describeRef, refOf, type KubeObject } from '../object.ts';
import { DigestAnnotation, needsApply } from './drift.ts';
import { ignoredPointers, respectIgnored, type IgnoreRule } from './ignore.ts';
import { decideApply, readObjectPolicy } from './object-policy.ts';
import { ownershipOf, type Owner } from './ownership.ts';

/**
 * Whether the plan can do without this object's live copy while it is believed absent: its package copy
 * carries no policy and matches no ignore rule whose outcome depends on the live copy (IfNotPresent, Ignore,
 * fields to keep as the cluster has them). Such an object keeps its read.
 */
export function mayCreateUnread(desired: KubeObject, rules: readonly IgnoreRule[] = []): boolean {
  const policy = readObjectPolicy(desired);
  if (!policy.ok || policy.value.apply !== 'Merge') return false;
  return ignoredPointers(desired, undefined, rules).length === 0;
}

/** What to do with an object whose create-only apply was refused, now that its live copy is known. */
export type RefusedCreate =
  /** Not sent: the live copy says apply Ignore (`ignored`: then not in health either), or nothing differs. */
  | { action: 'leave'; ignored: boolean }
  /** Sent as a plain apply; `adopt`: it belongs to no PackageSync, so its apply takes over fields (ADR 0006). */
  | { action: 'apply'; object: KubeObject; adopt: boolean; recreate: boolean };

/**
 * `sent` is the object as the plan would send it (digest stamped), `live` the copy read after the refusal.
 * The same rules as planChanges: a live Ignore wins over everything, another PackageSync's object is a
 * conflict (nothing is written to it), an unowned one is adopted; fields the live copy's ignore-fields
 * annotation names go as the live copy has them. Rules of spec.ignore cannot name it (mayCreateUnread).
 */
export function decideRefusedCreate(sent: KubeObject, live: KubeObject, owner: Owner): Result<RefusedCreate> {
  const decision = decideApply(sent, live);
  if (!decision.ok) return decision;
  if (decision.value.ignored) return ok({ action: 'leave', ignored: true });
  const who = ownershipOf(live, owner);
  if (typeof who === 'object') {
    const ref = refOf(sent);
    return fail(
      Reason.OwnershipConflict,
      `${describeRef(ref)} belongs to PackageSync ${who.otherOwner.namespace}/${who.otherOwner.name}: remove it from this package or from the other one`,
      { object: ref, terminal: true },
    );
  }
  if (decision.value.action === 'leave') return ok({ action: 'leave', ignored: false });
  const pointers = ignoredPointers(sent, live, []);
  if (!needsApply(sent, live, pointers)) return ok({ action: 'leave', ignored: false });
  return ok({
    action: 'apply',
    object: sentWithLiveFields(sent, live, pointers),
    adopt: who === 'unowned',
    recreate: decision.value.recreate,
  });
}

/**
 * Ignored fields go as the live copy has them (Argo CD's RespectIgnoreDifferences); the digest stays the
 * package's, even if an ignored pointer covers the annotations.
 */
export function sentWithLiveFields(
  stamped: KubeObject,
  live: KubeObject | undefined,
  pointers: readonly string[],
): KubeObject {
  if (pointers.length === 0) return stamped;
  const respected = respectIgnored(stamped, live, pointers);
  const digest = stamped.metadata.annotations?.[DigestAnnotation];
  const annotations = {
    ...respected.metadata.annotations,
    ...(digest === undefined ? {} : { [DigestAnnotation]: digest }),
  };
  return { ...respected, metadata: { ...respected.metadata, annotations } };
}
