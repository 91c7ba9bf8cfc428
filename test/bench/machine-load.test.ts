import { describe, expect, it } from 'vitest';
import { loadCell, refusal, waitQuiet } from '../../bench/lib/machine-load.ts';

/** A load average that reads each value in turn (the last one repeats), and a sleep that only counts. */
const machine = (...loads: number[]) => {
  let i = 0;
  const slept: number[] = [];
  return {
    read: () => loads[Math.min(i++, loads.length - 1)]!,
    sleep: (s: number) => {
      slept.push(s);
      return Promise.resolve();
    },
    slept,
  };
};

describe('the quiet-machine guard of a Flux comparison', () => {
  it('starts at once on a quiet machine', async () => {
    const m = machine(0.4);
    expect(await waitQuiet({ maxWaitSeconds: 300, ...m })).toEqual({
      loadAverage1m: 0.4,
      quiet: true,
      waitedSeconds: 0,
    });
    expect(m.slept).toEqual([]);
  });

  it("waits for the last run's load to decay below 1.5", async () => {
    const m = machine(3.2, 2.1, 1.6, 1.4);
    expect(await waitQuiet({ maxWaitSeconds: 300, pollSeconds: 10, ...m })).toEqual({
      loadAverage1m: 1.4,
      quiet: true,
      waitedSeconds: 30,
    });
  });

  it('gives up after the longest wait: the run is refused when required, else its row is marked', async () => {
    const m = machine(15, 17, 22);
    const load = await waitQuiet({ maxWaitSeconds: 20, pollSeconds: 10, ...m });
    expect(load).toEqual({ loadAverage1m: 22, quiet: false, waitedSeconds: 20 });
    expect(refusal('kustomize fleet 1000: Flux', load, true)).toMatch(
      /^kustomize fleet 1000: Flux: the load average over the last minute is 22\.00 \(> 1\.5\) after waiting 20 s/,
    );
    expect(refusal('kustomize fleet 1000: Flux', load, false)).toBeUndefined();
    expect(loadCell(load)).toBe('22.00 ⚠ not quiet (> 1.5)');
    expect(loadCell({ loadAverage1m: 0.72, quiet: true, waitedSeconds: 0 })).toBe('0.72');
    expect(loadCell(undefined)).toBe('—'); // a row of an older report
  });
});
