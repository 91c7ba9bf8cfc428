import { describe, expect, it } from 'vitest';
import type { RolloutWindow } from '../../api/packagesyncset.ts';
import { windowBlock } from './windows.ts';

const at = (iso: string) => Date.parse(iso);
// 2026-11-27 is a Friday
const weekdays: RolloutWindow = { name: 'office', kind: 'allow', schedule: '0 9 * * 1-5', duration: '8h' };
const freeze: RolloutWindow = { name: 'year-end', kind: 'deny', schedule: '0 0 20 12 *', duration: '336h' };
const lunch: RolloutWindow = { name: 'lunch', kind: 'deny', schedule: '0 12 * * *', duration: '1h' };

describe('windowBlock: allow windows and freezes, in UTC', () => {
  it.each([
    ['no windows: always open', [], '2026-11-27T03:00:00Z', undefined],
    ['inside an allow window', [weekdays], '2026-11-27T10:00:00Z', undefined],
    ['at the very minute it opens', [weekdays], '2026-11-27T09:00:00Z', undefined],
    [
      'after it closed on a Friday: opens Monday',
      [weekdays],
      '2026-11-27T17:00:00Z',
      { window: 'office', reason: 'OutsideAllowWindows', opensAt: '2026-11-30T09:00:00.000Z' },
    ],
    [
      'a deny window wins over an allow window',
      [weekdays, lunch],
      '2026-11-27T12:30:00Z',
      { window: 'lunch', reason: 'DenyWindowActive', opensAt: '2026-11-27T13:00:00.000Z' },
    ],
    [
      'a freeze that ends outside the allow windows: opens at the next allow opening after it',
      [weekdays, freeze],
      '2026-12-24T10:00:00Z',
      { window: 'year-end', reason: 'DenyWindowActive', opensAt: '2027-01-04T09:00:00.000Z' },
    ],
    ['a deny window alone, outside it', [lunch], '2026-11-27T14:00:00Z', undefined],
  ])('%s', (_what, windows, now, want) => {
    const got = windowBlock(windows as RolloutWindow[], at(now));
    if (want === undefined) return expect(got).toBeUndefined();
    expect({ window: got!.window, reason: got!.reason, opensAt: new Date(got!.opensAt!).toISOString() }).toEqual(want);
  });

  it('names the window, its schedule and when waves start again', () => {
    expect(windowBlock([weekdays, lunch], at('2026-11-27T12:30:00Z'))!.message).toBe(
      'deny window lunch (0 12 * * * for 1h, UTC) is in force; waves start again at 2026-11-27T13:00:00.000Z',
    );
    expect(windowBlock([weekdays], at('2026-11-28T08:00:00Z'))!.message).toContain(
      'outside every allow window; office (0 9 * * 1-5 for 8h, UTC) opens next',
    );
  });

  it('a deny window that never closes says no window opens', () => {
    const always: RolloutWindow = { name: 'always', kind: 'deny', schedule: '* * * * *', duration: '2m' };
    const got = windowBlock([always], at('2026-11-27T12:30:00Z'))!;
    expect(got.opensAt).toBeUndefined();
    expect(got.message).toContain('no window opens within a year');
  });
});
