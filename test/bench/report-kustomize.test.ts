import { describe, expect, it } from 'vitest';
import type { FleetResult } from '../../bench/lib/fleet.ts';
import { kustomizeTargets, type Results } from '../../bench/lib/report.ts';

const row = (tool: FleetResult['tool'], seconds: number, perProcessPeakMiB: Record<string, number>, more = {}) =>
  ({
    tool,
    n: 1000,
    seconds,
    peakMiB: Object.values(perProcessPeakMiB).reduce((a, b) => a + b, 0),
    perProcessPeakMiB,
    apiserver: {},
    client: {},
    ...more,
  }) as FleetResult;

const results = (fleet: FleetResult[], kfleet: FleetResult[]) =>
  ({ date: '', quick: false, machine: {}, versions: {}, settings: {}, fleet, kfleet, big: [] }) as Results;

describe('the kustomize fleet report (issue 27)', () => {
  it('judges time against the plain fleet of the same run and Flux, and RSS of the controller with its workers', () => {
    const ps = row('PackageSync', 110, { controller: 180, 'render-worker': 60 });
    const t = kustomizeTargets(results([row('PackageSync', 100, { packagesync: 170 })], [ps, row('Flux', 3000, {})]));
    expect(t.map((x) => [x.target, x.ok])).toEqual([
      ['≤ 1.15× the plain fleet of the same objects', true],
      ['≤ 0.2× Flux kustomize-controller', true],
      ['≤ 250 MiB', true],
    ]);
    // results from before session 21 have no same-objects baseline: fleet/'s units, said so
    expect(t[0]!.measured).toBe("110.0 s vs 100.0 s = 1.10× (the plain fleet's own objects)");
    expect(t[2]!.measured).toBe('240.0 MiB (controller 180.0 + render-worker 60.0)');
    const slow = kustomizeTargets(results([row('PackageSync', 90, {})], [row('PackageSync', 110, { c: 300 })]));
    expect(slow.map((x) => x.ok)).toEqual([false, undefined, false]);
    expect(slow[1]!.measured).toBe('Flux not run');
  });

  it("judges time against the kustomize fleet's own objects as plain YAML when that run is there", () => {
    const ps = row('PackageSync', 110, { controller: 180, 'render-worker': 60 });
    const r = results([row('PackageSync', 80, {})], [ps]);
    r.kfleetPlain = [row('PackageSync', 100, {}, { shape: 'kustomize-objects' })];
    const t = kustomizeTargets(r);
    expect(t[0]!.measured).toBe('110.0 s vs 100.0 s = 1.10×');
    expect(t[0]!.ok).toBe(true);
  });

  it('shows the peak with shared pages once beside the RSS sum, and still judges RSS', () => {
    const peakFootprint = { peakMiB: 215, perProcessMiB: { controller: 170, 'render-worker': 45 } };
    const ps = row('PackageSync', 110, { controller: 180, 'render-worker': 76 }, { peakFootprint });
    const t = kustomizeTargets(results([row('PackageSync', 100, {})], [ps]));
    expect(t[2]!.measured).toBe(
      '256.0 MiB (controller 180.0 + render-worker 76.0); peak with shared pages once 215.0 (controller 170.0 + render-worker 45.0)',
    );
    expect(t[2]!.ok).toBe(false);
  });

  it('has no targets without a kustomize fleet', () => {
    expect(kustomizeTargets(results([], []))).toEqual([]);
  });
});
