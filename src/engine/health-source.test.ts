import { describe, expect, it } from 'vitest';
import { pollDelayMs } from './health-source.ts';

describe('pollDelayMs: the polled health wait (remote clusters, impersonation)', () => {
  it('polls every 250 ms for the first 1.5 s, then backs off to 2 s', () => {
    const delays = Array.from({ length: 11 }, (_, n) => pollDelayMs(n));
    expect(delays).toEqual([250, 250, 250, 250, 250, 250, 500, 1000, 2000, 2000, 2000]);
  });

  it('sees an object that became Current at 0.8 s within 250 ms (a doubling from 250 ms saw it at 1.75 s)', () => {
    let at = 0;
    let n = 0;
    while (at < 800) at += pollDelayMs(n++);
    expect(at).toBeLessThanOrEqual(1050);
  });
});
