import { describe, expect, it } from 'vitest';
import type { Status } from '../../api/packagesync.ts';
import { observe, viewOf, type MessageKind, type RecordMemory, type RecordPolicy } from './record.ts';

const SHA1 = 'a'.repeat(40);
const SHA2 = 'b'.repeat(40);
const rev = (sha: string) => `main@sha1:${sha}`;
const T = '2026-11-27T10:00:00Z';

const ready = (status: 'True' | 'False' | 'Unknown', reason: string, message = reason) => ({
  type: 'Ready',
  status,
  reason,
  message,
  lastTransitionTime: T,
});
const progressing = (sha: string): Status => ({
  lastAttemptedRevision: rev(sha),
  conditions: [ready('Unknown', 'Progressing')],
});
const applied = (sha: string): Status => ({
  lastAttemptedRevision: rev(sha),
  conditions: [ready('Unknown', 'HealthCheckPending')],
});
const healthy = (sha: string): Status => ({
  lastAttemptedRevision: rev(sha),
  lastAppliedRevision: rev(sha),
  conditions: [ready('True', 'ReconciliationSucceeded', `Applied revision ${rev(sha)}`)],
  history: [
    {
      revision: rev(sha),
      result: 'Succeeded',
      startedAt: T,
      durationSeconds: 1,
      created: 2,
      configured: 1,
      pruned: 0,
      digest: '',
    },
  ],
});
const failed = (sha: string, reason = 'HealthCheckFailed'): Status => ({
  lastAttemptedRevision: rev(sha),
  conditions: [ready('False', reason, 'Deployment/web not ready')],
  cause: [{ kind: 'Pod', name: 'web-1', reason: 'ImagePullBackOff', message: 'no such image' }],
});

const ALL: RecordPolicy = {
  kinds: new Set<MessageKind>(['started', 'applied', 'healthy', 'failed', 'superseded', 'resolved']),
  quietPeriodMs: 10 * 60_000,
  mirrorsState: false,
};

/** Feeds statuses one after the other (a minute apart unless `at` says), collecting kinds sent. */
function run(statuses: (Status | undefined)[], policy = ALL, at?: number[], start?: RecordMemory) {
  let memory = start;
  const sent: { kind: MessageKind; revision: string; id: string; reason?: string }[] = [];
  statuses.forEach((status, i) => {
    const r = observe(memory, { namespace: 'team-a', name: 'web', uid: 'u1', status }, policy, at?.[i] ?? i * 60_000);
    memory = r.memory;
    sent.push(
      ...r.messages.map((m) => ({
        kind: m.kind,
        revision: m.revision,
        id: m.id,
        ...(m.reason ? { reason: m.reason } : {}),
      })),
    );
  });
  return { sent, memory };
}

describe('deployment records from PackageSync statuses', () => {
  it('a commit that goes Ready: one record, started → applied → healthy, with the plan counts', () => {
    const { sent } = run([undefined, progressing(SHA1), applied(SHA1), healthy(SHA1)]);
    expect(sent.map((s) => s.kind)).toEqual(['started', 'applied', 'healthy']);
    expect(new Set(sent.map((s) => s.revision))).toEqual(new Set([rev(SHA1)]));
    expect(sent.map((s) => s.id)).toEqual([`u1/${rev(SHA1)}#1`, `u1/${rev(SHA1)}#2`, `u1/${rev(SHA1)}#3`]);
    const r = observe(undefined, { namespace: 'n', name: 'x', uid: 'u', status: progressing(SHA1) }, ALL, 0);
    const h = observe(r.memory, { namespace: 'n', name: 'x', uid: 'u', status: healthy(SHA1) }, ALL, 1);
    expect(h.messages[0]!.counts).toEqual({ created: 2, configured: 1, pruned: 0 });
  });

  it('resyncs of the same revision (Progressing, Ready again) send nothing: one record per revision, not per reconcile', () => {
    const { sent } = run([
      progressing(SHA1),
      healthy(SHA1),
      progressing(SHA1),
      applied(SHA1),
      healthy(SHA1),
      healthy(SHA1),
    ]);
    expect(sent.map((s) => s.kind)).toEqual(['started', 'healthy']);
  });

  it('a failure retried keeps failing: one failure message, then resolved when Ready', () => {
    const { sent } = run([
      progressing(SHA1),
      failed(SHA1),
      progressing(SHA1),
      failed(SHA1),
      failed(SHA1),
      healthy(SHA1),
    ]);
    expect(sent.map((s) => s.kind)).toEqual(['started', 'failed', 'resolved']);
    expect(sent[1]!.reason).toBe('HealthCheckFailed');
  });

  it('the failure message carries the why (first cause) and the reason', () => {
    const r = observe(undefined, { namespace: 'n', name: 'x', uid: 'u', status: failed(SHA1) }, ALL, 0);
    expect(r.messages[0]).toMatchObject({
      kind: 'failed',
      reason: 'HealthCheckFailed',
      cause: 'Pod/web-1: ImagePullBackOff: no such image',
    });
  });

  it('a new revision before the old one became healthy supersedes it', () => {
    const { sent } = run([progressing(SHA1), applied(SHA1), progressing(SHA2), healthy(SHA2)]);
    expect(sent.map((s) => `${s.kind} ${s.revision.slice(-3)}`)).toEqual([
      'started aaa',
      'applied aaa',
      'superseded aaa',
      'started bbb',
      'healthy bbb',
    ]);
  });

  it('a healthy revision replaced by a new one is not "superseded" (it ended healthy)', () => {
    const { sent } = run([progressing(SHA1), healthy(SHA1), progressing(SHA2)]);
    expect(sent.map((s) => s.kind)).toEqual(['started', 'healthy', 'started']);
  });

  it('a unit flapping within the quiet period: one failure and one resolved, not one per flap', () => {
    const { sent } = run([
      healthy(SHA1),
      failed(SHA1),
      healthy(SHA1),
      failed(SHA1),
      healthy(SHA1),
      failed(SHA1),
      healthy(SHA1),
    ]);
    expect(sent.map((s) => s.kind)).toEqual(['failed', 'resolved']);
  });

  it('the same failure after the quiet period is sent again', () => {
    const minute = 60_000;
    const { sent } = run([healthy(SHA1), failed(SHA1), healthy(SHA1), failed(SHA1)], ALL, [
      0,
      minute,
      2 * minute,
      15 * minute,
    ]);
    expect(sent.map((s) => s.kind)).toEqual(['failed', 'resolved', 'failed']);
  });

  it('a different failure (another reason) is news even within the quiet period', () => {
    const { sent } = run([progressing(SHA1), failed(SHA1, 'FetchFailed'), failed(SHA1, 'HealthCheckFailed')]);
    expect(sent.map((s) => `${s.kind}${s.reason ? ` ${s.reason}` : ''}`)).toEqual([
      'started',
      'failed FetchFailed',
      'failed HealthCheckFailed',
    ]);
  });

  it('a new commit failing quietly still has its healthy sent once it is fixed (a new revision is news)', () => {
    const { sent } = run([healthy(SHA1), failed(SHA1), healthy(SHA1), progressing(SHA2), failed(SHA2), healthy(SHA2)]);
    expect(sent.map((s) => `${s.kind} ${s.revision.slice(-3)}`)).toEqual([
      'failed aaa',
      'resolved aaa',
      'started bbb',
      'healthy bbb',
    ]);
  });

  it('commit statuses mirror state: no quiet period', () => {
    const { sent } = run([healthy(SHA1), failed(SHA1), healthy(SHA1), failed(SHA1), healthy(SHA1)], {
      ...ALL,
      mirrorsState: true,
    });
    expect(sent.map((s) => s.kind)).toEqual(['failed', 'resolved', 'failed', 'resolved']);
  });

  it('first sight of a unit already healthy (a new Notifier) sends nothing; a failing one is reported', () => {
    expect(run([healthy(SHA1)]).sent).toEqual([]);
    expect(run([failed(SHA1)]).sent.map((s) => s.kind)).toEqual(['failed']);
  });

  it("first sight of a unit that became healthy since the Notifier was created: the record's ending is sent", () => {
    // the outbox write of its earlier phases never landed (the leader died first): its ending is still news
    const created = Date.parse(T);
    const since = (ms: number) => ({ ...ALL, watchingSince: ms });
    const { sent, memory } = run([healthy(SHA1), healthy(SHA1)], since(created - 60_000));
    expect(sent.map((m) => [m.kind, m.id])).toEqual([['healthy', `u1/${rev(SHA1)}#1`]]);
    expect(memory).toMatchObject({ phase: 'healthy', seq: 1, wasHealthy: true });
    // the same second counts as since (both times have a second's resolution)
    expect(run([healthy(SHA1)], since(created + 999)).sent.map((s) => s.kind)).toEqual(['healthy']);
    // healthy before the Notifier existed (it was created later): nothing happened it should have seen
    expect(run([healthy(SHA1)], since(created + 1_000)).sent).toEqual([]);
  });

  it('a Notifier that wants only failures gets only failures and their resolution', () => {
    const policy = { ...ALL, kinds: new Set<MessageKind>(['failed', 'resolved']) };
    const { sent } = run([progressing(SHA1), healthy(SHA1), progressing(SHA2), failed(SHA2), healthy(SHA2)], policy);
    expect(sent.map((s) => s.kind)).toEqual(['failed', 'resolved']);
  });

  it('"healthy" subscribers get the resolution of a failure they were not sent as healthy', () => {
    const policy = { ...ALL, kinds: new Set<MessageKind>(['healthy']) };
    const { sent } = run([progressing(SHA1), failed(SHA1), healthy(SHA1)], policy);
    expect(sent.map((s) => s.kind)).toEqual(['healthy']);
  });

  it('waiting for a dependency is no failure; suspended or statusless says nothing', () => {
    const dep: Status = { conditions: [ready('False', 'DependencyNotReady')] };
    expect(viewOf(dep).phase).toBeUndefined();
    expect(run([undefined, dep, { conditions: [] }]).sent).toEqual([]);
  });

  it('a PackageSync recreated under the same name starts afresh', () => {
    const first = run([progressing(SHA1), failed(SHA1)]).memory;
    const r = observe(first, { namespace: 'team-a', name: 'web', uid: 'u2', status: progressing(SHA1) }, ALL, 0);
    expect(r.messages.map((m) => m.kind)).toEqual(['started']);
    expect(r.messages[0]!.id).toBe(`u2/${rev(SHA1)}#1`);
  });

  it('message ids never repeat within a PackageSync, even for the same revision', () => {
    const { sent } = run([healthy(SHA1), failed(SHA1), healthy(SHA1)], ALL, [0, 60_000, 20 * 60_000]);
    const { sent: more } = run(
      [failed(SHA1), healthy(SHA1)],
      ALL,
      [40 * 60_000, 41 * 60_000],
      run([healthy(SHA1), failed(SHA1), healthy(SHA1)], ALL, [0, 60_000, 20 * 60_000]).memory,
    );
    const ids = [...sent, ...more].map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
