import { isRecord, ownField } from '../object.ts';

/**
 * True when every field of `desired` has the same value in `live`: what a server-side apply of
 * `desired` would leave unchanged. Live may carry more (defaults, other managers' fields).
 *
 * - maps: compared on desired's keys, recursively;
 * - lists: same length, element i of desired a subset of element i of live (extra items appended by
 *   another manager count as a difference: one harmless apply);
 * - scalars: equal; a desired number also matches its decimal string (`cpu: 1` reads back `"1"`);
 * - a desired zero value (null, false, 0, "", {}, []) matches an absent live field: the API server
 *   drops them from built-in types (Go's omitempty), and reporting drift for them would re-apply
 *   every such object on every reconcile.
 * Anything else, including quantities the server rewrites (`0.5` → `500m`), is a difference: it
 * costs one apply request, never a missed drift.
 */
export function isSubset(desired: unknown, live: unknown): boolean {
  if (live === undefined || live === null) return isZeroValue(desired);
  if (Array.isArray(desired)) {
    return Array.isArray(live) && live.length === desired.length && desired.every((item, i) => isSubset(item, live[i]));
  }
  if (isRecord(desired)) {
    return isRecord(live) && Object.keys(desired).every((key) => isSubset(desired[key], ownField(live, key)));
  }
  if (typeof desired === 'number' && typeof live === 'string') return String(desired) === live;
  return desired === live;
}

function isZeroValue(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return isRecord(value) && Object.keys(value).length === 0;
}
