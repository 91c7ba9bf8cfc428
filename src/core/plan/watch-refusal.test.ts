import { describe, expect, it } from 'vitest';
import { isRefusal, onRetryTimer, refusalStands } from './watch-refusal.ts';

const times = { retryMs: 900_000, recheckMinMs: 60_000 };

describe('refusalStands', () => {
  it.each([
    ['never refused', undefined, 0, false, false],
    ['just refused', 1_000, 1_000, false, true],
    ['refused a minute ago, nothing changed', 0, 60_000, false, true],
    ['inventory changed, but refused seconds ago', 0, 5_000, true, true],
    ['inventory changed a minute after', 0, 60_000, true, false],
    ['the long interval passed', 0, 900_000, false, false],
  ])('%s', (_, refusedAt, now, recheck, stands) => {
    expect(refusalStands(refusedAt, now, recheck, times)).toBe(stands);
  });
});

describe('isRefusal', () => {
  it.each([
    [403, true],
    [401, false], // our credentials expired: retried, they are reloaded
    [410, false],
    [500, false],
    [undefined, false],
  ])('%s → %s', (status, refusal) => {
    expect(isRefusal(status)).toBe(refusal);
  });
});

describe('onRetryTimer', () => {
  const times = { retryMs: 1_000, recheckMinMs: 60_000 };
  it('asks again once the refusal lapsed', () => {
    expect(onRetryTimer(0, 1_000, times)).toEqual({ ask: true });
    expect(onRetryTimer(undefined, 5, times)).toEqual({ ask: true });
  });
  it('a timer that fires a millisecond early by the clock arms itself again, never gives up', () => {
    expect(onRetryTimer(0, 999, times)).toEqual({ ask: false, inMs: 1 });
    expect(onRetryTimer(0, 400, times)).toEqual({ ask: false, inMs: 600 });
  });
});
