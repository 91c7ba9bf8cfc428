import { describe, expect, it } from 'vitest';
import { Fleet, REV1, REV2, REV3, commit, rolloutSpec, secrets } from './fleet-model.test-support.ts';
import { approvalAnnotation, gatesToCheck, NO_TARGETS, parseApproval, stepRollout } from './step.ts';

const MIN = 60_000;
const threeWaves = () =>
  rolloutSpec({
    waves: [
      { name: 'canary', targets: { count: 1 } },
      { name: 'early', targets: { percent: 50 }, bakeTime: '5m', gates: [{ name: 'ok', approval: {} }] },
      { name: 'rest' },
    ],
  });

/** Steps until the phase leaves `phase` (or n steps): the controller's passes. */
function until(f: Fleet, rev: string, done: () => boolean, n = 20) {
  for (let i = 0; i < n; i++) {
    f.step(rev);
    if (done()) return;
  }
}

describe('stepRollout: waves in order', () => {
  it('a set with no target says why (clusters of its own namespace only), and pins nothing', () => {
    const f = new Fleet([], threeWaves());
    const r = f.step(REV1);
    expect(r.pins.size).toBe(0);
    expect(r.status.message).toBe(NO_TARGETS);
    expect(r.status.conditions!.find((c) => c.type === 'Ready')?.message).toBe(NO_TARGETS);
  });

  it('a first rollout stamps only the first wave; later waves have no child until their turn', () => {
    const f = new Fleet(secrets(6), threeWaves());
    const r = f.step(REV1);
    expect([...r.pins.keys()]).toEqual(['c000']);
    expect(r.status.phase).toBe('Progressing');
    expect(r.status.waves!.map((w) => [w.name, w.size])).toEqual([
      ['canary', 1],
      ['early', 3],
      ['rest', 2],
    ]);
    expect(r.status.targets!.find((t) => t.name === 'c005')).toMatchObject({ wave: 'rest', health: 'Pending' });
    expect(r.status.conditions!.find((c) => c.type === 'Reconciling')?.status).toBe('True');
  });

  it('bakes from the moment the whole wave is healthy, then waits for an approval of this exact revision, recording who', () => {
    const f = new Fleet(secrets(6), threeWaves());
    until(f, REV1, () => f.wave('early')?.phase === 'Baking');
    const healthyAt = Date.parse(f.wave('early')!.healthyAt!);
    expect(f.last.requeueAfterMs).toBe(healthyAt + 5 * MIN - f.now);
    f.advance(4 * MIN);
    f.step(REV1);
    expect(f.status!.phase).toBe('Baking');
    expect(f.status!.blockedBy).toMatchObject({ wave: 'early', gate: 'bake', reason: 'Baking' });
    f.advance(1 * MIN + 1);
    f.step(REV1);
    expect(f.status!.phase).toBe('Gating');
    expect(f.status!.blockedBy).toMatchObject({ wave: 'early', gate: 'ok', reason: 'WaitingForApproval' });
    expect(f.status!.blockedBy!.message).toContain(`packagesync.io/approve=early@${commit(REV1)}`);
    expect(f.pins.size).toBe(4); // nothing of wave 3 stamped
    f.approval = { wave: 'early', revision: commit(REV2), by: 'mallory' }; // another revision approves nothing
    f.step(REV1);
    expect(f.status!.phase).toBe('Gating');
    f.approval = { wave: 'early', revision: commit(REV1), by: 'alice' };
    until(f, REV1, () => f.status!.phase === 'Succeeded');
    expect(f.wave('early')).toMatchObject({ phase: 'Succeeded', approvedBy: 'alice', gatesPassed: ['ok'] });
    expect(f.status!.lastGoodRevision).toBe(REV1);
    expect([...f.pins.values()].every((r) => r === REV1)).toBe(true);
    expect(f.status!.conditions!.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      reason: 'RolloutSucceeded',
    });
    // no target of a wave was pinned before the previous wave succeeded
    const stepOf = (t: string) => f.history.find((h) => h.target === t)!.step;
    expect(Math.max(...['c001', 'c002', 'c003'].map(stepOf))).toBeLessThan(Math.min(stepOf('c004'), stepOf('c005')));
  });

  it('a regression during bake restarts the bake clock once the wave is healthy again', () => {
    const f = new Fleet(secrets(6), threeWaves());
    until(f, REV1, () => f.wave('early')?.phase === 'Baking');
    const first = f.wave('early')!.healthyAt;
    f.advance(3 * MIN);
    f.children.get('c002')!.ready = 'Unknown';
    f.step(REV1);
    expect(f.wave('early')).toMatchObject({ phase: 'Progressing' });
    expect(f.wave('early')!.healthyAt).toBeUndefined();
    f.children.get('c002')!.ready = 'True';
    f.step(REV1);
    expect(f.wave('early')!.phase).toBe('Baking');
    expect(Date.parse(f.wave('early')!.healthyAt!)).toBeGreaterThan(Date.parse(first!));
  });

  it('maxParallel bounds how many targets of a wave update at once; settled ones free their slot', () => {
    const f = new Fleet(secrets(5), rolloutSpec({ waves: [{ name: 'all', maxParallel: 2 }] }));
    f.behaviour.set('c000', () => 'slow');
    f.step(REV1);
    expect([...f.pins.keys()]).toEqual(['c000', 'c001']);
    f.step(REV1);
    f.step(REV1); // c001 healthy → c002 starts; c000 still in flight
    expect([...f.pins.keys()]).toEqual(['c000', 'c001', 'c002']);
  });

  it('a child Ready on an older revision is not healthy on the pinned one', () => {
    const f = new Fleet(secrets(1), rolloutSpec({ waves: [{ name: 'all' }] }));
    until(f, REV1, () => f.status!.phase === 'Succeeded');
    f.step(REV2);
    // pretend the child was re-pinned but still reports its last Ready on REV1
    f.children.set('c000', { ...f.children.get('c000')!, pinnedCommit: commit(REV2), since: 0 });
    const r = stepRollout({
      rollout: f.rollout,
      status: f.status,
      generation: 1,
      targets: f.targets,
      children: f.children,
      revision: REV2,
      now: f.now,
    });
    expect(r.status.targets![0]).toMatchObject({ health: 'Progressing', revision: REV2 });
    expect(r.status.phase).toBe('Progressing');
  });
});

describe('stepRollout: failure budget and revert', () => {
  const budgeted = (onFailure: 'revert' | 'hold' = 'revert') =>
    rolloutSpec({
      onFailure,
      waves: [
        { name: 'one', targets: { count: 2 } },
        { name: 'two', targets: { count: 4 }, failureBudget: 1 },
        { name: 'three' },
      ],
    });

  it('a failure within budget lets the wave through; beyond it every updated target goes back to the last good revision', () => {
    const f = new Fleet(secrets(8), budgeted());
    until(f, REV1, () => f.status!.phase === 'Succeeded');
    f.behaviour.set('c002', (r) => (r === REV2 ? 'fails' : 'healthy'));
    f.behaviour.set('c003', (r) => (r === REV2 ? 'unreachable' : 'healthy'));
    until(f, REV2, () => f.status!.phase === 'Reverted');
    expect(f.status!.phase).toBe('Reverted');
    expect(f.status!.failedRevision).toBe(REV2);
    expect(f.wave('two')).toMatchObject({ phase: 'Failed', failed: 2, budget: 1 });
    expect(f.status!.message).toContain('c002 (HealthCheckFailed)');
    expect(f.status!.message).toContain('c003 (unreachable)');
    expect(f.status!.blockedBy).toMatchObject({ wave: 'two', reason: 'FailureBudgetExceeded' });
    // digest-exact: every child back on exactly the recorded good revision; wave three never saw REV2
    expect([...f.pins.values()].every((r) => r === REV1)).toBe(true);
    expect(
      f.history
        .filter((h) => h.revision === REV2)
        .map((h) => h.target)
        .sort(),
    ).toEqual(['c000', 'c001', 'c002', 'c003', 'c004', 'c005']);
    const ready = f.status!.conditions!.find((c) => c.type === 'Ready')!;
    expect(ready).toMatchObject({ status: 'False', reason: 'RolloutReverted' });
    expect(f.status!.conditions!.find((c) => c.type === 'Stalled')?.status).toBe('True');
    // the failed revision is not rolled out again, a newer one is
    f.step(REV2);
    expect(f.status!.phase).toBe('Reverted');
    f.step(REV3);
    expect(f.status!.phase).toBe('Progressing');
    expect(f.status!.revision).toBe(REV3);
  });

  it('onFailure: hold leaves every target where it is, for a person', () => {
    const f = new Fleet(secrets(8), budgeted('hold'));
    until(f, REV1, () => f.status!.phase === 'Succeeded');
    f.behaviour.set('c002', () => 'fails');
    f.behaviour.set('c003', () => 'fails');
    until(f, REV2, () => f.status!.phase === 'Holding');
    expect(f.status!.phase).toBe('Holding');
    expect(f.pins.get('c002')).toBe(REV2);
    expect(f.pins.get('c007')).toBe(REV1);
    expect(f.status!.conditions!.find((c) => c.type === 'Ready')?.reason).toBe('RolloutHeld');
  });

  it('revert with no earlier good revision holds and says so (nothing is deleted)', () => {
    const f = new Fleet(secrets(3), rolloutSpec({ waves: [{ name: 'one', targets: { count: 1 } }, { name: 'two' }] }));
    f.behaviour.set('c000', () => 'fails');
    until(f, REV1, () => f.status!.phase === 'Holding');
    expect(f.status!.phase).toBe('Holding');
    expect(f.status!.message).toContain('nothing to revert to');
    expect([...f.pins.keys()]).toEqual(['c000']);
  });

  it('a PackageSync of the child’s name that is not the set’s is never taken over: the target fails, named', () => {
    const f = new Fleet(secrets(2), rolloutSpec({ waves: [{ name: 'one', failureBudget: 1 }] }));
    f.step(REV1);
    f.children.set('c001', { conflict: true, since: 0 });
    f.behaviour.set('c001', () => 'slow');
    const r = stepRollout({
      rollout: f.rollout,
      status: f.status,
      generation: 1,
      targets: f.targets,
      children: f.children,
      revision: REV1,
      now: f.now,
    });
    expect(r.status.targets!.find((t) => t.name === 'c001')).toMatchObject({
      health: 'Failed',
      reason: 'ChildNameConflict',
    });
    expect(r.status.waves![0]!.failed).toBe(1);
  });

  it('a target that stays progressing past the progress deadline counts as failed', () => {
    const f = new Fleet(secrets(2), rolloutSpec({ waves: [{ name: 'one', progressDeadline: '2m' }] }));
    f.behaviour.set('c001', () => 'slow');
    f.step(REV1);
    f.step(REV1);
    expect(f.last.requeueAfterMs).toBeLessThanOrEqual(2 * MIN + 1);
    f.advance(2 * MIN + 1);
    f.step(REV1);
    expect(f.target('c001')).toMatchObject({ health: 'Failed', reason: 'ProgressDeadlineExceeded' });
    expect(f.status!.phase).toBe('Holding');
  });
});

describe('stepRollout: supersede, restart, targets coming and going', () => {
  it('a newer revision during a rollout starts over from the first wave; targets keep their pins until their wave', () => {
    const f = new Fleet(secrets(6), threeWaves());
    f.approval = { wave: 'early', revision: commit(REV1) };
    until(f, REV1, () => f.status!.phase === 'Baking');
    f.advance(6 * MIN);
    until(f, REV1, () => f.status!.phase === 'Succeeded');
    expect(f.status!.phase).toBe('Succeeded');
    until(f, REV2, () => f.status!.phase === 'Baking');
    f.advance(6 * MIN);
    until(f, REV2, () => f.status!.phase === 'Gating');
    expect(f.status!.blockedBy).toMatchObject({ wave: 'early', reason: 'WaitingForApproval' });
    f.step(REV3);
    expect(f.status!.revision).toBe(REV3);
    expect(f.status!.message).toMatch(new RegExp(`^${REV3} supersedes ${REV2}; `));
    expect(f.wave('canary')!.phase).toBe('Progressing');
    expect(f.wave('early')!.phase).toBe('Pending');
    expect(f.pins.get('c001')).toBe(REV2);
    expect(f.pins.get('c005')).toBe(REV1);
  });

  it('a restart resumes from status: a finished wave is not re-run, the bake is not skipped, a repeated step changes nothing', () => {
    const f = new Fleet(secrets(6), threeWaves());
    until(f, REV1, () => f.wave('early')?.phase === 'Baking');
    const before = structuredClone(f.status!);
    // the same pass again (a new leader reading the same status and children): same pins, same phases
    const again = stepRollout({
      rollout: f.rollout,
      status: before,
      generation: 1,
      targets: f.targets,
      children: f.children,
      revision: REV1,
      now: f.now,
    });
    expect(again.status.waves).toEqual(before.waves);
    expect([...again.pins]).toEqual([...f.pins]);
    expect(again.status.targets!.filter((t) => t.wave === 'canary').map((t) => t.startedAt)).toEqual(
      before.targets!.filter((t) => t.wave === 'canary').map((t) => t.startedAt),
    );
    // well within the bake, the resumed controller still bakes
    f.advance(MIN);
    f.step(REV1);
    expect(f.status!.phase).toBe('Baking');
  });

  it('a target added mid-rollout sits on the last good revision; a removed one loses its pin (its child is deleted)', () => {
    const f = new Fleet(
      secrets(4),
      rolloutSpec({
        waves: [
          { name: 'one', targets: { count: 1 } },
          { name: 'two', bakeTime: '1h' },
        ],
      }),
    );
    until(f, REV1, () => f.status!.phase === 'Succeeded', 5);
    f.advance(61 * MIN);
    until(f, REV1, () => f.status!.phase === 'Succeeded');
    until(f, REV2, () => f.status!.phase === 'Baking');
    f.targets = [...f.targets.filter((t) => t.name !== 'c003'), ...new Fleet(secrets(6), f.rollout).targets.slice(4)];
    f.step(REV2);
    expect(f.pins.has('c003')).toBe(false);
    expect(f.target('c004')).toMatchObject({ revision: REV1 });
    expect(f.target('c004')!.wave).toBeUndefined();
    f.advance(61 * MIN);
    until(f, REV2, () => f.status!.phase === 'Succeeded');
    expect(f.pins.get('c004')).toBe(REV2);
  });
});

describe('gates', () => {
  it('an HTTP gate is checked when it blocks; it passes on success and fails the wave after its timeout', () => {
    const rollout = rolloutSpec({
      waves: [
        {
          name: 'one',
          targets: { count: 1 },
          gates: [{ name: 'smoke', http: { url: 'http://smoke.test/ok', timeout: '1m' } }],
        },
        { name: 'two' },
      ],
    });
    const f = new Fleet(secrets(3), rollout);
    until(f, REV1, () => f.status!.phase === 'Gating');
    expect(gatesToCheck(rollout, f.status)).toEqual([
      {
        key: 'one/smoke',
        wave: 'one',
        gate: { name: 'smoke', http: { url: 'http://smoke.test/ok', expectStatus: 200, timeout: '1m' } },
        revision: REV1,
        attempt: 0,
      },
    ]);
    f.gateResults.set('one/smoke', { passed: true, message: '200' });
    until(f, REV1, () => f.status!.phase === 'Succeeded');
    expect(f.wave('one')!.gatesPassed).toEqual(['smoke']);
    f.gateResults.set('one/smoke', { passed: false, message: 'GET answered 503' });
    until(f, REV2, () => f.status!.phase === 'Gating');
    expect(f.status!.blockedBy).toMatchObject({
      gate: 'smoke',
      reason: 'GateNotPassed',
      message: 'gate smoke: GET answered 503',
    });
    f.advance(61_000);
    f.step(REV2);
    expect(f.status!.phase).toBe('Reverted');
    expect(f.status!.blockedBy!.reason).toBe('GateFailed');
    expect(f.pins.get('c000')).toBe(REV1);
  });

  it('parseApproval reads <wave>@<revision>[:<who>]', () => {
    expect(parseApproval(`prod@${commit(REV1)}:alice@example.com`)).toEqual({
      wave: 'prod',
      revision: commit(REV1),
      by: 'alice@example.com',
    });
    expect(parseApproval(`prod@${REV1}`)).toEqual({ wave: 'prod', revision: REV1 });
    expect(parseApproval(`prod@${commit(REV1)}:system:serviceaccount:ops:bot`)?.by).toBe(
      'system:serviceaccount:ops:bot',
    );
    expect(parseApproval('no-revision')).toBeUndefined();
    expect(parseApproval(undefined)).toBeUndefined();
  });

  it('approvalAnnotation writes what parseApproval reads back, the revision as its commit', () => {
    for (const who of ['alice@example.com', 'system:serviceaccount:ops:bot', undefined]) {
      const value = approvalAnnotation('prod', REV1, who);
      expect(value).toBe(`prod@${commit(REV1)}${who ? `:${who}` : ''}`);
      expect(parseApproval(value)).toEqual({ wave: 'prod', revision: commit(REV1), ...(who ? { by: who } : {}) });
    }
  });
});

describe('no revision yet', () => {
  it('is Idle and stamps nothing; a resolution error is Ready=False with its reason', () => {
    const f = new Fleet(secrets(2), threeWaves());
    const r = f.step(undefined);
    expect(r.status.phase).toBe('Idle');
    expect(r.pins.size).toBe(0);
    const e = stepRollout({
      rollout: f.rollout,
      status: undefined,
      generation: 1,
      targets: f.targets,
      children: new Map(),
      revisionError: { reason: 'RefNotFound', message: 'branch main not found' },
      now: f.now,
    });
    expect(e.status.conditions!.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'RefNotFound',
    });
  });
});
