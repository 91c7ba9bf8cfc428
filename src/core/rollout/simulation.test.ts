/**
 * The wave logic at fleet scale (issue 31): 500 targets as plain data, driven pass by pass as the controller
 * drives them. Checks the ordering rule (no target of a wave moves before every earlier wave succeeded), the
 * parallelism bound, and the budget rule (a bad revision stops in the wave that exceeds it and every moved
 * target goes back to the last good revision; later waves never see it).
 */
import { describe, expect, it } from 'vitest';
import { Fleet, REV1, REV2, rolloutSpec, secrets } from './fleet-model.test-support.ts';

const N = 500;
const rollout = rolloutSpec({
  waves: [
    { name: 'canary', targets: { selector: { matchLabels: { ring: 'canary' } } }, failureBudget: 0 },
    { name: 'ten', targets: { percent: 10 }, maxParallel: 10, failureBudget: '10%' },
    { name: 'forty', targets: { percent: 40 }, maxParallel: '25%', failureBudget: '5%' },
    { name: 'rest', maxParallel: 100, failureBudget: '5%' },
  ],
});
const fleet = () =>
  new Fleet(
    secrets(N, (i) => ({ ring: i % 100 === 7 ? 'canary' : 'main' })),
    rollout,
  );

function driveUntil(f: Fleet, rev: string, phases: string[], maxSteps = 400) {
  const waveOf = new Map<string, string>();
  const order = rollout.waves.map((w) => w.name);
  let maxInFlight = 0;
  for (let i = 0; i < maxSteps; i++) {
    f.step(rev);
    for (const t of f.status!.targets!) if (t.wave) waveOf.set(t.name, t.wave);
    // in flight: pinned to rev in the active wave and not settled
    const active = f.status!.waves!.find((w) => w.phase !== 'Succeeded');
    if (active) {
      const inFlight = f.status!.targets!.filter(
        (t) => t.wave === active.name && t.revision === rev && t.health === 'Progressing',
      ).length;
      maxInFlight = Math.max(maxInFlight, inFlight);
    }
    // ordering: a target of wave k is pinned to rev only once every earlier wave succeeded
    for (const t of f.status!.targets!) {
      if (t.revision !== rev || !t.wave) continue;
      const k = order.indexOf(t.wave);
      for (const earlier of f.status!.waves!.slice(0, k))
        expect(earlier.phase, `${t.name} of ${t.wave} moved before ${earlier.name}`).toBe('Succeeded');
    }
    if (phases.includes(f.status!.phase!)) break;
  }
  return { waveOf, maxInFlight };
}

describe('a rollout over 500 targets', () => {
  it('goes wave by wave in order, within maxParallel, and ends with every target on the revision', () => {
    const f = fleet();
    const { maxInFlight } = driveUntil(f, REV1, ['Succeeded']);
    expect(f.status!.phase).toBe('Succeeded');
    expect(f.status!.waves!.map((w) => [w.name, w.size])).toEqual([
      ['canary', 5],
      ['ten', 50],
      ['forty', 200],
      ['rest', 245],
    ]);
    expect(maxInFlight).toBeLessThanOrEqual(100);
    expect(f.pins.size).toBe(N);
    expect([...f.pins.values()].every((r) => r === REV1)).toBe(true);
    expect(f.steps).toBeLessThan(100);
  });

  it('a bad revision stops in the wave that exceeds its budget, and every moved target is back on the good one', () => {
    const f = fleet();
    driveUntil(f, REV1, ['Succeeded']);
    const plan = new Map(f.status!.targets!.map((t) => [t.name, t.wave]));
    // within budget in "ten" (5 of 50 fail), beyond it in "forty" (11 of 200 > 5% = 10)
    const bad = new Set([
      ...[...plan]
        .filter(([, w]) => w === 'ten')
        .slice(0, 5)
        .map(([n]) => n),
      ...[...plan]
        .filter(([, w]) => w === 'forty')
        .slice(0, 11)
        .map(([n]) => n),
    ]);
    for (const n of bad) f.behaviour.set(n, (r) => (r === REV2 ? 'fails' : 'healthy'));
    f.history.length = 0;
    driveUntil(f, REV2, ['Reverted', 'Holding']);
    expect(f.status!.phase).toBe('Reverted');
    expect(f.status!.waves!.map((w) => w.phase)).toEqual(['Succeeded', 'Succeeded', 'Failed', 'Pending']);
    expect(f.status!.waves!.find((w) => w.name === 'forty')).toMatchObject({ failed: 11, budget: 10 });
    expect(f.status!.blockedBy).toMatchObject({ wave: 'forty', reason: 'FailureBudgetExceeded' });
    // the rest never saw REV2; everything that did is pinned back to exactly REV1
    expect(f.history.filter((h) => h.revision === REV2 && plan.get(h.target) === 'rest')).toEqual([]);
    expect([...f.pins.values()].every((r) => r === REV1)).toBe(true);
    // the revert converges: every target healthy on REV1 again
    for (let i = 0; i < 3; i++) f.step(REV2);
    expect(f.status!.targets!.every((t) => t.health === 'Healthy' && t.revision === REV1)).toBe(true);
  });
});
