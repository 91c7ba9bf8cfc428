import { describe, expect, it } from 'vitest';
import type { SetStatus } from '../../api/packagesyncset.ts';
import { onlyProgress, statusWrite } from './progress-only.ts';

const stored: SetStatus = {
  observedGeneration: 1,
  phase: 'Progressing',
  revision: 'main@sha1:b',
  lastGoodRevision: 'main@sha1:a',
  waves: [
    { name: 'w1', phase: 'Progressing', size: 2, healthy: 0, failed: 0, budget: 0, startedAt: '2026-11-28T00:00:00Z' },
    { name: 'w2', phase: 'Pending', size: 1, healthy: 0, failed: 0, budget: 0 },
  ],
  targets: [
    {
      name: 'a',
      cluster: 'a',
      child: 'fleet-a',
      wave: 'w1',
      revision: 'main@sha1:b',
      health: 'Progressing',
      startedAt: '2026-11-28T00:00:00Z',
    },
    {
      name: 'b',
      cluster: 'b',
      child: 'fleet-b',
      wave: 'w1',
      revision: 'main@sha1:b',
      health: 'Pending',
      startedAt: '2026-11-28T00:00:00Z',
    },
    { name: 'c', cluster: 'c', child: 'fleet-c', wave: 'w2', revision: 'main@sha1:a', health: 'Healthy' },
  ],
};
const edit = (f: (s: SetStatus) => void): SetStatus => {
  const s = structuredClone(stored);
  f(s);
  return s;
};

describe('onlyProgress: which status changes may wait a moment', () => {
  it('a child’s health, reason and message, and a wave’s counts, are progress only', () => {
    expect(onlyProgress(stored, structuredClone(stored))).toBe(true);
    expect(
      onlyProgress(
        stored,
        edit((s) => {
          s.targets![0]!.health = 'Healthy';
          s.targets![1]!.health = 'Progressing';
          s.targets![1]!.reason = 'Progressing';
          s.targets![1]!.message = 'waiting for Deployment/app';
          s.waves![0]!.healthy = 1;
        }),
      ),
    ).toBe(true);
  });

  it('a wave’s count of healthy targets, in blockedBy, the message and the conditions, is progress only', () => {
    const counting = (n: number): SetStatus => {
      const message = `wave w1: ${n} of 2 healthy on main@sha1:b`;
      return edit((s) => {
        s.blockedBy = { wave: 'w1', gate: 'health', reason: 'WaveProgressing', message, since: 'x' };
        s.message = message;
        s.conditions = [{ type: 'Ready', status: 'Unknown', reason: 'Progressing', message } as never];
        s.waves![0]!.healthy = n;
      });
    };
    expect(onlyProgress(counting(0), counting(1))).toBe(true);
    // another wave, or another gate, is not
    const next = counting(1);
    next.blockedBy!.wave = 'w2';
    expect(onlyProgress(counting(0), next)).toBe(false);
    const baking = counting(2);
    baking.blockedBy = { wave: 'w1', gate: 'bake', reason: 'Baking', message: 'baking', since: 'y' };
    expect(onlyProgress(counting(1), baking)).toBe(false);
  });

  it.each<[string, (s: SetStatus) => void]>([
    ['a pin (a target’s revision)', (s) => (s.targets![2]!.revision = 'main@sha1:b')],
    ['a target’s start', (s) => (s.targets![2]!.startedAt = '2026-11-28T00:00:05Z')],
    ['a target joining a wave', (s) => (s.targets![2]!.wave = 'w1')],
    ['a target more', (s) => s.targets!.push({ name: 'd', cluster: 'd', child: 'fleet-d', health: 'Pending' })],
    ['a wave’s phase', (s) => (s.waves![0]!.phase = 'Baking')],
    ['a wave healthy (bake counts from it)', (s) => (s.waves![0]!.healthyAt = '2026-11-28T00:00:09Z')],
    ['the set’s phase', (s) => (s.phase = 'Reverted')],
    ['the revision', (s) => (s.revision = 'main@sha1:c')],
    ['a gate blocking', (s) => (s.blockedBy = { wave: 'w1', gate: 'g', reason: 'r', message: 'm', since: 'x' })],
    ['the message', (s) => (s.message = 'rolling out main@sha1:c')],
    ['the conditions', (s) => (s.conditions = [{ type: 'Ready', status: 'True', reason: 'r', message: 'm' } as never])],
    ['observedGeneration', (s) => (s.observedGeneration = 2)],
  ])('%s is written at once', (_what, f) => {
    expect(onlyProgress(stored, edit(f))).toBe(false);
  });

  it('the order of keys is not a change (the API server gives them back sorted)', () => {
    const sorted = JSON.parse(JSON.stringify(stored), (_k, v: unknown) =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
        : v,
    ) as SetStatus;
    expect(JSON.stringify(sorted)).not.toBe(JSON.stringify(stored));
    const next = structuredClone(stored);
    next.targets![1]!.health = 'Progressing';
    expect(onlyProgress(sorted, next)).toBe(true);
  });

  it('a set without status yet is never progress only', () => {
    expect(onlyProgress(undefined, stored)).toBe(false);
  });
});

describe('statusWrite: when a pass writes the set status', () => {
  const sortedKeys = (s: SetStatus): SetStatus =>
    JSON.parse(JSON.stringify(s), (_k, v: unknown) =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
        : v,
    ) as SetStatus;

  it('not at all when the stored status says the same with its keys sorted (every pass PUT it before)', () => {
    expect(statusWrite(sortedKeys(stored), structuredClone(stored), undefined, 0, 1000)).toBe('unchanged');
  });

  it('progress at most once a period after the last write; anything else at once', () => {
    const progressed = edit((s) => (s.targets![1]!.health = 'Progressing'));
    expect(statusWrite(stored, progressed, 5_000, 5_400, 1000)).toEqual({ dueAt: 6_000 });
    expect(statusWrite(stored, progressed, 5_000, 6_000, 1000)).toBe('now');
    expect(statusWrite(stored, progressed, undefined, 5_400, 1000)).toBe('now');
    const pinned = edit((s) => (s.targets![2]!.revision = 'main@sha1:b'));
    expect(statusWrite(stored, pinned, 5_000, 5_400, 1000)).toBe('now');
    expect(statusWrite(undefined, stored, 5_000, 5_400, 1000)).toBe('now');
  });
});
