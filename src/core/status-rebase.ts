/**
 * A status write that lost an optimistic-concurrency race (409 Conflict) is retried against the
 * PackageSync as it is now. This decides what the retry writes.
 *
 * - Only metadata or spec changed meanwhile (a trigger annotation, a new generation): the status is as
 *   we last saw it, so ours is written unchanged.
 * - Someone else wrote the status meanwhile (a late write of an earlier run, another replica, the CLI):
 *   every inventory entry they listed is kept next to ours. An entry too many costs one prune of an
 *   absent object on the next reconcile; an entry too few would leave an applied object unknown to the
 *   inventory — invariant 2 — so the union is the only safe answer.
 */
import { mergeInventories } from './inventory.ts';
import type { Status } from '../api/packagesync.ts';

export function rebaseStatus(ours: Status, base: Status | undefined, theirs: Status | undefined): Status {
  if (canonical(base) === canonical(theirs)) return ours;
  const theirEntries = theirs?.inventory?.entries ?? [];
  if (theirEntries.length === 0) return ours;
  // ours wins for entries in both (its version is the newer one); theirs only adds what ours lacks
  return { ...ours, inventory: { entries: mergeInventories(theirEntries, ours.inventory?.entries ?? []) } };
}

/** JSON with sorted keys: the API server may return fields in another order than we sent them. */
function canonical(value: unknown): string {
  return JSON.stringify(value ?? {}, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}
