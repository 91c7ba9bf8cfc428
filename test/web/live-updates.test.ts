import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FleetPage, FleetRow } from '../../src/cli/ui/api-types.ts';
import { throttle } from '../../web/throttle.ts';
import { withRow } from '../../web/fleet-row.ts';

const row = (name: string, state: FleetRow['state'] = 'Ready'): FleetRow => ({
  namespace: 'team-a',
  name,
  state,
  reason: 'ReconciliationSucceeded',
  message: 'Applied',
});

const page = (...items: FleetRow[]): FleetPage => ({
  items,
  total: items.length,
  page: 1,
  pageSize: 50,
  counts: { Ready: items.length, Reconciling: 0, Stalled: 0, Failed: 0, Suspended: 0 },
  namespaces: ['team-a'],
});

describe('a change event updates the row the fleet page shows, before its re-read', () => {
  it('replaces the row of the same PackageSync, leaving the others and the counts as they are', () => {
    const before = page(row('a'), row('b'), row('c'));
    const after = withRow(before, row('b', 'Failed'));
    expect(after.items.map((r) => r.state)).toEqual(['Ready', 'Failed', 'Ready']);
    expect(after.counts).toBe(before.counts);
    expect(before.items[1]!.state).toBe('Ready');
  });

  it('is the same page when the row is not on it (another page, another namespace)', () => {
    const before = page(row('a'));
    expect(withRow(before, row('z'))).toBe(before);
    expect(withRow(before, { ...row('a'), namespace: 'team-b' })).toBe(before);
  });
});

describe('throttle: the first change is read at once, a burst is one more read', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('calls at once, then once more at the end of the burst, never more than once per period', () => {
    const fn = vi.fn();
    const changed = throttle(fn, 200);
    changed();
    expect(fn).toHaveBeenCalledTimes(1);
    changed();
    changed();
    vi.advanceTimersByTime(199);
    expect(fn).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(1000);
    expect(fn).toHaveBeenCalledTimes(2);
    changed();
    expect(fn).toHaveBeenCalledTimes(3);
  });
});
