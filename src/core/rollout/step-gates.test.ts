/** The rollout step with Job and metric gates, time windows, and a held rollout resumed by a person. */
import { describe, expect, it } from 'vitest';
import { Fleet, REV1, REV2, commit, rolloutSpec, secrets } from './fleet-model.test-support.ts';
import { gatesToCheck } from './step.ts';

function until(f: Fleet, rev: string, done: () => boolean, n = 20) {
  for (let i = 0; i < n; i++) {
    f.step(rev);
    if (done()) return;
  }
}

const jobSpec = { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'check' }] } } };

describe('Job and metric gates', () => {
  it('a Job that fails fails the wave at once (no waiting for the timeout); one that succeeds passes', () => {
    const rollout = rolloutSpec({
      waves: [
        { name: 'one', targets: { count: 1 }, gates: [{ name: 'smoke', job: { spec: jobSpec, timeout: '1h' } }] },
        { name: 'two' },
      ],
    });
    const f = new Fleet(secrets(3), rollout);
    until(f, REV1, () => f.status!.phase === 'Gating');
    expect(gatesToCheck(rollout, f.status)).toMatchObject([{ key: 'one/smoke', revision: REV1, attempt: 0 }]);
    f.gateResults.set('one/smoke', { passed: true, message: 'Job web-one-smoke-x succeeded' });
    until(f, REV1, () => f.status!.phase === 'Succeeded');

    f.gateResults.set('one/smoke', { passed: false, failed: true, message: 'Job x failed (BackoffLimitExceeded)' });
    until(f, REV2, () => f.status!.phase !== 'Progressing' && f.status!.phase !== 'Baking');
    expect(f.status!.phase).toBe('Reverted');
    expect(f.status!.blockedBy).toMatchObject({ wave: 'one', reason: 'GateFailed' });
    expect(f.status!.message).toContain('gate smoke failed: Job x failed (BackoffLimitExceeded)');
  });

  it('a metric gate that keeps missing its threshold fails the wave after its timeout, retried meanwhile', () => {
    const metric = { address: 'http://prom.test', query: 'up', operator: '>', threshold: 0, timeout: '30s' } as const;
    const rollout = rolloutSpec({ onFailure: 'hold', waves: [{ name: 'one', gates: [{ name: 'slo', metric }] }] });
    const f = new Fleet(secrets(2), rollout);
    f.gateResults.set('one/slo', { passed: false, message: 'the query returned no samples' });
    until(f, REV1, () => f.status!.phase === 'Gating');
    expect(f.last.requeueAfterMs).toBe(10_000);
    f.advance(20_000);
    f.step(REV1);
    expect(f.status!.phase).toBe('Gating');
    f.advance(11_000);
    f.step(REV1);
    expect(f.status!.phase).toBe('Holding');
    expect(f.status!.message).toContain('gate slo failed for 30s: the query returned no samples');
    expect(f.status!.message).toContain(`annotate packagesync.io/resume=one@${commit(REV1)}`);
  });
});

describe('time windows and freezes', () => {
  // the fleet's clock starts Friday 2026-11-27 10:00 UTC
  it('no wave starts inside a deny window; status names it and when it ends; the rollout starts then', () => {
    const rollout = rolloutSpec({
      windows: [{ name: 'morning-freeze', kind: 'deny', schedule: '0 9 * * *', duration: '2h' }],
      waves: [{ name: 'one' }],
    });
    const f = new Fleet(secrets(2), rollout);
    const r = f.step(REV1);
    expect(r.pins.size).toBe(0);
    expect(f.status!.phase).toBe('Progressing');
    expect(f.status!.blockedBy).toMatchObject({ wave: 'one', gate: 'morning-freeze', reason: 'DenyWindowActive' });
    expect(f.status!.blockedBy!.message).toContain('waves start again at 2026-11-27T11:00:00.000Z');
    expect(r.requeueAfterMs).toBe(3_600_000);
    f.advance(3_600_000);
    until(f, REV1, () => f.status!.phase === 'Succeeded');
    expect(f.status!.phase).toBe('Succeeded');
  });

  it('a window that closes during a wave stops further targets from starting; those in flight finish', () => {
    const rollout = rolloutSpec({
      windows: [{ name: 'office', kind: 'allow', schedule: '0 9 * * 1-5', duration: '2h' }],
      waves: [{ name: 'one', maxParallel: 1 }],
    });
    const f = new Fleet(secrets(3), rollout);
    f.advance(59 * 60_000); // 10:59: the window is open, one target starts
    f.step(REV1);
    expect([...f.pins.keys()]).toEqual(['c000']);
    f.advance(2 * 60_000); // 11:01: closed until Monday 09:00
    until(f, REV1, () => f.target('c000')!.health === 'Healthy');
    f.step(REV1);
    expect([...f.pins.keys()]).toEqual(['c000']);
    expect(f.status!.blockedBy).toMatchObject({ gate: 'office', reason: 'OutsideAllowWindows' });
    expect(f.status!.blockedBy!.message).toMatch(/^wave one paused: .*2026-11-30T09:00:00.000Z$/);
  });

  it('a revert is never held back by a window', () => {
    const rollout = rolloutSpec({
      windows: [{ name: 'office', kind: 'allow', schedule: '0 9 * * 1-5', duration: '2h' }],
      waves: [{ name: 'one' }],
    });
    const f = new Fleet(secrets(2), rollout);
    until(f, REV1, () => f.status!.phase === 'Succeeded');
    f.behaviour.set('c001', () => 'fails');
    until(f, REV2, () => f.status!.phase === 'Reverted');
    f.advance(3 * 3_600_000); // the window closed
    f.step(REV2);
    expect([...f.pins.values()]).toEqual([REV1, REV1]);
  });
});

describe('resuming a held rollout', () => {
  it('goes on when a person names the held wave and revision, recorded with who; the same value never resumes twice', () => {
    const rollout = rolloutSpec({
      onFailure: 'hold',
      waves: [{ name: 'one', progressDeadline: '1m' }, { name: 'two' }],
    });
    const f = new Fleet(secrets(2), rollout);
    // wave one takes every target; c001 never becomes healthy in time
    f.behaviour.set('c001', () => 'slow');
    until(f, REV1, () => f.status!.phase === 'Holding', 5);
    f.advance(61_000);
    until(f, REV1, () => f.status!.phase === 'Holding');
    expect(f.status!.phase).toBe('Holding');
    expect(f.status!.failedRevision).toBe(REV1);

    // a stale value (another wave, another revision) does nothing
    f.resume = { wave: 'two', revision: commit(REV1), by: 'eve', value: `two@${commit(REV1)}:eve` };
    f.step(REV1);
    expect(f.status!.phase).toBe('Holding');

    f.behaviour.set('c001', () => 'healthy');
    f.resume = { wave: 'one', revision: commit(REV1), by: 'alice', value: `one@${commit(REV1)}:alice` };
    until(f, REV1, () => f.status!.phase === 'Succeeded');
    expect(f.status!.phase).toBe('Succeeded');
    expect(f.status!.lastHandledResume).toBe(`one@${commit(REV1)}:alice`);
    expect(f.wave('one')).toMatchObject({ resumedBy: 'alice', attempt: 1, phase: 'Succeeded' });
    expect(f.status!.lastGoodRevision).toBe(REV1);
  });

  it('a resumed wave that fails again holds again, and the old value does not resume it', () => {
    const rollout = rolloutSpec({ onFailure: 'hold', waves: [{ name: 'one' }] });
    const f = new Fleet(secrets(1), rollout);
    f.behaviour.set('c000', () => 'fails');
    until(f, REV1, () => f.status!.phase === 'Holding');
    f.resume = { wave: 'one', revision: commit(REV1), by: 'alice', value: `one@${commit(REV1)}:alice` };
    f.step(REV1);
    expect(f.status!.phase).toBe('Holding'); // still stalled: fails again at once
    expect(f.wave('one')!.attempt).toBe(1);
    f.step(REV1);
    f.step(REV1);
    expect(f.wave('one')!.attempt).toBe(1);
  });
});
