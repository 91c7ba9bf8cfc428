/**
 * When a watch the API server refused (403: the controller's RBAC does not allow list/watch of that kind in that
 * namespace) is asked for again. The watches are only a trigger (self-heal, the health wait's cache); without one
 * the interval still corrects drift and the health wait reads directly. So a refusal is remembered instead of
 * retried with back-off forever (a retry storm of 403s, one per refused kind and namespace, that never ends),
 * and asked again only rarely: after `retryMs`, or sooner when a holder's inventory changed (a new kind or
 * namespace may come with new RBAC), but not more often than `recheckMinMs`.
 */

export interface RefusalTimes {
  /** A refusal stands this long; then the watch is tried once more. */
  retryMs: number;
  /** An inventory change re-asks a refusal at most this often. */
  recheckMinMs: number;
}

export const REFUSAL_TIMES: RefusalTimes = { retryMs: 15 * 60_000, recheckMinMs: 60_000 };

/** Whether an API answer to a list or watch is a refusal to remember, not a failure to retry. */
export function isRefusal(status: number | undefined): boolean {
  return status === 403;
}

/**
 * Whether the watch refused at `refusedAt` stays refused at `now` (no list, no watch sent).
 * `recheck`: the holder's inventory changed since it last asked.
 */
export function refusalStands(
  refusedAt: number | undefined,
  now: number,
  recheck: boolean,
  times: RefusalTimes = REFUSAL_TIMES,
): boolean {
  if (refusedAt === undefined) return false;
  const age = now - refusedAt;
  if (age >= times.retryMs) return false;
  return !(recheck && age >= times.recheckMinMs);
}

/**
 * What the retry timer of a refused watch does when it fires: ask again, or arm itself again for what is left.
 * A timer may fire a millisecond before `Date.now()` says the refusal lapsed; returning then without re-arming
 * left the watch refused for good (e2e/health-watch saw a 1 s refusal never asked again).
 */
export function onRetryTimer(
  refusedAt: number | undefined,
  now: number,
  times: RefusalTimes = REFUSAL_TIMES,
): { ask: true } | { ask: false; inMs: number } {
  if (!refusalStands(refusedAt, now, false, times)) return { ask: true };
  return { ask: false, inMs: Math.max(1, refusedAt! + times.retryMs - now) };
}
