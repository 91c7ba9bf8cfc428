import { describe, expect, it } from 'vitest';
import { Reason } from '../api/reasons.ts';
import { isReadyFor, reduceStatus, sameStatus } from './status.ts';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:01:00Z';
const types = (s: ReturnType<typeof reduceStatus>) => s.conditions!.map((c) => `${c.type}=${c.status}/${c.reason}`);

describe('reduceStatus', () => {
  it('suspended: keeps the last conditions and revisions, adds Suspended=True; resuming drops it', () => {
    const ok = reduceStatus(undefined, 1, { kind: 'succeeded', revision: 'main@sha1:abc', message: 'ok' }, T0);
    const s = reduceStatus(ok, 2, { kind: 'suspended' }, T1);
    expect(types(s)).toEqual(['Ready=True/ReconciliationSucceeded', 'Suspended=True/Suspended']);
    expect(s.conditions![0]).toEqual(ok.conditions![0]);
    expect(s.conditions![1]).toMatchObject({ observedGeneration: 2, lastTransitionTime: T1 });
    // the spec as it is now was not reconciled: kstatus must not read the suspend as reconciled
    expect(s.observedGeneration).toBe(1);
    expect(s.lastAppliedRevision).toBe('main@sha1:abc');
    expect(sameStatus(s, reduceStatus(s, 2, { kind: 'suspended' }, '2026-01-01T00:09:00Z'))).toBe(true);
    const resumed = reduceStatus(s, 3, { kind: 'progressing', revision: 'main@sha1:abc', message: 'Applying' }, T1);
    expect(types(resumed)).toEqual(['Ready=Unknown/Progressing', 'Reconciling=True/Progressing']);
  });

  it('marks work in progress: Ready Unknown, Reconciling True, no Stalled', () => {
    const s = reduceStatus(undefined, 3, { kind: 'progressing', revision: 'main@sha1:abc', message: 'Applying' }, T0);
    expect(types(s)).toEqual(['Ready=Unknown/Progressing', 'Reconciling=True/Progressing']);
    expect(s.lastAttemptedRevision).toBe('main@sha1:abc');
    expect(s.observedGeneration).toBeUndefined();
  });

  it('on success: only Ready=True, both revisions and observedGeneration set', () => {
    const s = reduceStatus(
      undefined,
      4,
      { kind: 'succeeded', revision: 'v1@sha1:abc', message: 'Applied revision v1@sha1:abc: 2 created' },
      T0,
    );
    expect(types(s)).toEqual(['Ready=True/ReconciliationSucceeded']);
    expect(s).toMatchObject({
      lastAppliedRevision: 'v1@sha1:abc',
      lastAttemptedRevision: 'v1@sha1:abc',
      observedGeneration: 4,
    });
    expect(s.conditions![0]!.observedGeneration).toBe(4);
  });

  it('a terminal failure stalls; lastAppliedRevision stays', () => {
    const prev = reduceStatus(undefined, 1, { kind: 'succeeded', revision: 'main@sha1:old', message: 'ok' }, T0);
    const s = reduceStatus(
      prev,
      2,
      {
        kind: 'failed',
        revision: 'main@sha1:new',
        failure: { reason: Reason.RenderFailed, message: 'bad.yaml (document 1): …', terminal: true },
      },
      T1,
    );
    expect(types(s)).toEqual(['Ready=False/RenderFailed', 'Stalled=True/RenderFailed']);
    expect(s.lastAppliedRevision).toBe('main@sha1:old');
    expect(s.lastAttemptedRevision).toBe('main@sha1:new');
    expect(s.observedGeneration).toBe(2);
  });

  it('a retried failure keeps Reconciling=True so kstatus says InProgress, not Failed', () => {
    const s = reduceStatus(
      undefined,
      1,
      { kind: 'failed', failure: { reason: Reason.FetchFailed, message: 'connection refused', terminal: false } },
      T0,
    );
    expect(types(s)).toEqual(['Ready=False/FetchFailed', 'Reconciling=True/ProgressingWithRetry']);
  });

  it('a health timeout stalls even though it is retried', () => {
    const s = reduceStatus(
      undefined,
      1,
      { kind: 'failed', failure: { reason: Reason.HealthCheckFailed, message: 'timeout', terminal: false } },
      T0,
    );
    expect(types(s)).toEqual(['Ready=False/HealthCheckFailed', 'Stalled=True/HealthCheckFailed']);
  });

  it('moves lastTransitionTime only when a condition changes status', () => {
    const a = reduceStatus(undefined, 1, { kind: 'succeeded', revision: 'r1', message: 'one' }, T0);
    const b = reduceStatus(a, 2, { kind: 'succeeded', revision: 'r2', message: 'two' }, T1);
    expect(b.conditions![0]!.lastTransitionTime).toBe(T0);
    const c = reduceStatus(b, 3, { kind: 'progressing', revision: 'r3', message: 'three' }, T1);
    expect(c.conditions![0]!.lastTransitionTime).toBe(T1);
  });

  it('keeps messages on one line and bounded', () => {
    const s = reduceStatus(
      undefined,
      1,
      { kind: 'failed', failure: { reason: 'X', message: `a\nb\n${'z'.repeat(5000)}`, terminal: true } },
      T0,
    );
    expect(s.conditions![0]!.message).not.toContain('\n');
    expect(s.conditions![0]!.message.length).toBeLessThanOrEqual(1024);
  });
});

describe('status.failures', () => {
  const ref = (name: string) => ({ group: 'apps', kind: 'Deployment', namespace: 'a', name });
  const failures = Array.from({ length: 25 }, (_, i) => ({
    reason: i === 0 ? Reason.ApplyFailed : Reason.DependencyFailed,
    message: `d${i}: line one\nline two`,
    object: ref(`d${i}`),
    terminal: false,
  }));

  it('lists every failure of a best-effort apply, in order, bounded, on one line each', () => {
    const s = reduceStatus(undefined, 1, { kind: 'failed', failure: failures[0]!, failures }, T0);
    expect(s.failures).toHaveLength(20);
    expect(s.failures![0]).toEqual({
      object: 'Deployment/a/d0',
      reason: 'ApplyFailed',
      message: 'd0: line one; line two',
    });
    expect(s.failures![19]!.object).toBe('Deployment/a/d19');
  });

  it('a failure of any other step is its only entry; a new run or a success clears the list', () => {
    const failed = reduceStatus(
      undefined,
      1,
      { kind: 'failed', failure: { reason: Reason.RenderFailed, message: 'x.yaml: bad', terminal: true } },
      T0,
    );
    expect(failed.failures).toEqual([{ reason: 'RenderFailed', message: 'x.yaml: bad' }]);
    const next = reduceStatus(failed, 1, { kind: 'progressing', revision: 'r', message: 'Applying' }, T1);
    expect(next.failures).toBeUndefined();
    expect(sameStatus(failed, next)).toBe(false);
  });
});

describe('status.cause', () => {
  const cause = [
    { kind: 'Deployment', namespace: 'a', name: 'web', reason: 'InProgress', message: '0 of 1 replicas available' },
    { kind: 'ReplicaSet', namespace: 'a', name: 'web-5d9f' },
    {
      kind: 'Pod',
      namespace: 'a',
      name: 'web-5d9f-x',
      reason: 'ErrImagePull',
      message: `ErrImagePull: ${'i'.repeat(300)}`,
    },
  ];
  const health = {
    reason: Reason.HealthCheckFailed,
    message: 'timeout waiting for health: 1 object not Current',
    terminal: false,
  };

  it('a failed health check writes the bounded chain and names the first cause in Ready', () => {
    const s = reduceStatus(undefined, 1, { kind: 'failed', revision: 'r', failure: health, cause }, T0);
    expect(s.cause).toHaveLength(3);
    expect(s.cause![2]).toMatchObject({ kind: 'Pod', name: 'web-5d9f-x', reason: 'ErrImagePull' });
    expect(s.cause![2]!.message!.length).toBeLessThanOrEqual(256);
    const ready = s.conditions!.find((c) => c.type === 'Ready')!;
    expect(ready.message).toMatch(
      /^timeout waiting for health: 1 object not Current; cause: Pod\/a\/web-5d9f-x: ErrImagePull: i+…$/,
    );
    // Stalled keeps the failure's own words
    expect(s.conditions!.find((c) => c.type === 'Stalled')!.message).toBe(health.message);
  });

  it('is cleared by a new run, a success and a failure without a chain', () => {
    const failed = reduceStatus(undefined, 1, { kind: 'failed', revision: 'r', failure: health, cause }, T0);
    for (const outcome of [
      { kind: 'progressing', revision: 'r', message: 'Applying' },
      { kind: 'succeeded', revision: 'r', message: 'ok' },
      { kind: 'failed', failure: { reason: Reason.RenderFailed, message: 'x.yaml: bad', terminal: true } },
    ] as const) {
      const next = reduceStatus(failed, 1, outcome, T1);
      expect(next.cause).toBeUndefined();
      expect(sameStatus(failed, next)).toBe(false);
    }
  });
});

describe('isReadyFor and sameStatus', () => {
  it('is ready only for the generation it observed', () => {
    const s = reduceStatus(undefined, 2, { kind: 'succeeded', revision: 'r', message: 'm' }, T0);
    expect(isReadyFor(s, 2)).toBe(true);
    expect(isReadyFor(s, 3)).toBe(false);
  });

  it('ignores transition times when comparing', () => {
    const a = reduceStatus(undefined, 1, { kind: 'dependency-not-ready', message: 'dep' }, T0);
    const b = reduceStatus(undefined, 1, { kind: 'dependency-not-ready', message: 'dep' }, T1);
    expect(sameStatus(a, b)).toBe(true);
  });
});
