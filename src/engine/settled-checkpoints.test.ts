import { describe, expect, it } from 'vitest';
import type { PackageSync, Spec } from '../api/packagesync.ts';
import type { PackageObjects } from '../adapters/kube/objects.ts';
import { mayUseCheckpoint, SettledCheckpoints, type CheckpointInputs } from './settled-checkpoints.ts';

const ps = (uid: string, ready = true, generation = 2, revision = 'main@sha1:abc'): PackageSync =>
  ({
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: { name: 'web', namespace: 'apps', uid, generation },
    spec: {},
    status: {
      observedGeneration: 2,
      lastAppliedRevision: revision,
      conditions: [
        { type: 'Ready', status: ready ? 'True' : 'False', reason: 'x', message: '', lastTransitionTime: '' },
      ],
    },
  }) as unknown as PackageSync;

const watched = { liveCache: {} } as unknown as PackageObjects;
const inputs = (p: PackageSync, spec: Partial<Spec> = {}): CheckpointInputs => ({
  ps: p,
  spec: spec as Spec,
  revision: 'main@sha1:abc',
  substitution: undefined,
  inventory: [{ id: 'apps_web__ConfigMap', v: 'v1' }],
});

describe('SettledCheckpoints', () => {
  it('answers for the same PackageSync only: another uid (deleted and re-created) has none', () => {
    const memory = new SettledCheckpoints();
    memory.remember(ps('u1'), 'cp');
    expect(memory.get(ps('u1'))).toBe('cp');
    expect(memory.get(ps('u2'))).toBeUndefined();
    memory.remember(ps('u1'), undefined);
    expect(memory.size).toBe(0);
    memory.remember(ps('u1'), 'cp');
    memory.forget('apps', 'web');
    expect(memory.get(ps('u1'))).toBeUndefined();
  });
});

describe('mayUseCheckpoint', () => {
  const memory = new SettledCheckpoints();
  it('only for a Ready PackageSync at the revision it applied, read through the watches, not asked for', () => {
    expect(mayUseCheckpoint(memory, watched, undefined, inputs(ps('u1')))).toBe(true);
    expect(mayUseCheckpoint(undefined, watched, undefined, inputs(ps('u1')))).toBe(false);
    expect(mayUseCheckpoint(memory, {} as PackageObjects, undefined, inputs(ps('u1')))).toBe(false);
    expect(mayUseCheckpoint(memory, watched, '2026-11-24T00:00:00Z', inputs(ps('u1')))).toBe(false);
    expect(mayUseCheckpoint(memory, watched, undefined, inputs(ps('u1', false)))).toBe(false);
    expect(mayUseCheckpoint(memory, watched, undefined, inputs(ps('u1', true, 3)))).toBe(false);
    expect(mayUseCheckpoint(memory, watched, undefined, inputs(ps('u1', true, 2, 'main@sha1:old')))).toBe(false);
    expect(mayUseCheckpoint(memory, watched, undefined, { ...inputs(ps('u1')), inventory: [] })).toBe(false);
  });

  it('never for a Helm package (valuesFrom and the cluster capabilities are inputs it does not see)', () => {
    expect(mayUseCheckpoint(memory, watched, undefined, inputs(ps('u1'), { helm: {} } as Partial<Spec>))).toBe(false);
  });
});
