import { describe, expect, it } from 'vitest';
import type { FleetResult } from '../../bench/lib/fleet.ts';
import { helmTargets, renderHelmFleet } from '../../bench/lib/report-helm.ts';

const row = (tool: FleetResult['tool'], seconds: number, peakMiB: number, more: Partial<FleetResult> = {}) =>
  ({
    tool,
    n: 1000,
    seconds,
    peakMiB,
    perProcessPeakMiB: tool === 'Flux' ? { 'source-controller': 100, 'helm-controller': peakMiB - 100 } : {},
    apiserver: { APPLY: 3000 },
    client: { PATCH: 3000 },
    shape: 'helm',
    ...more,
  }) as FleetResult;

describe('the Helm fleet report (issue 27)', () => {
  it('judges time ≤ 0.2× and peak RSS ≤ 0.5× Flux at the largest N both ran', () => {
    const t = helmTargets([row('PackageSync', 100, 200), row('Flux', 600, 500)]);
    expect(t.map((x) => [x.target, x.ok])).toEqual([
      ['≤ 0.2× Flux helm-controller', true],
      ['≤ 0.5× Flux (source- + helm-controller)', true],
    ]);
    expect(t[0]!.measured).toBe('100.0 s vs 600.0 = 0.17×');
    const missed = helmTargets([row('PackageSync', 200, 300), row('Flux', 600, 500)]);
    expect(missed.map((x) => x.ok)).toEqual([false, false]);
  });

  it('cannot say a capped Flux run missed: its time is a lower bound', () => {
    const t = helmTargets([row('PackageSync', 200, 300), row('Flux', 600, 500, { readyAtCap: 400 })]);
    expect(t.map((x) => x.ok)).toEqual([undefined, undefined]);
    expect(t[0]!.measured).toContain('< 0.33×');
  });

  it('has no targets without both tools, and marks a busy machine in the row', () => {
    expect(helmTargets([row('PackageSync', 100, 200)])).toEqual([]);
    const out: string[] = [];
    renderHelmFleet(
      [row('PackageSync', 100, 200, { load: { loadAverage1m: 3, quiet: false, waitedSeconds: 300 } })],
      (s = '') => out.push(s),
    );
    expect(out.join('\n')).toMatch(/\| 1000 \| PackageSync \| 100\.0 \| 200\.0 .*\| 3\.00 ⚠ not quiet \(> 1\.5\) \|/);
  });
});
