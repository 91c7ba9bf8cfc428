import { describe, expect, it } from 'vitest';
import type { PackageSync } from '../api/packagesync.ts';
import { memoryWorld } from '../../test/engine/memory-ports.ts';
import type { ClusterDiscovery, PackageObjects } from './ports.ts';
import type { ResourceMapping } from '../adapters/kube/discovery.ts';
import type { LiveCache, WatchedPlace } from '../adapters/kube/live-cache.ts';
import { refKey, type KubeObject, type ObjectRef } from '../core/object.ts';
import {
  mayUseCheckpoint,
  sameCopies,
  SettledCheckpoints,
  settledCopies,
  type CheckpointInputs,
} from './settled-checkpoints.ts';

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

/** The package's objects read through the controller's watches (the memory ports'), and read without them. */
const watched: PackageObjects = memoryWorld().ports.objects.forPackage({ namespace: 'apps', name: 'web' });
const unwatched: PackageObjects = { ...watched, liveCache: undefined };
const inputs = (p: PackageSync): CheckpointInputs => ({
  ps: p,
  inputs: { digest: 'inputs-digest', revision: 'main@sha1:abc' },
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
    expect(mayUseCheckpoint(memory, unwatched, undefined, inputs(ps('u1')))).toBe(false);
    expect(mayUseCheckpoint(memory, watched, '2026-11-24T00:00:00Z', inputs(ps('u1')))).toBe(false);
    expect(mayUseCheckpoint(memory, watched, undefined, inputs(ps('u1', false)))).toBe(false);
    expect(mayUseCheckpoint(memory, watched, undefined, inputs(ps('u1', true, 3)))).toBe(false);
    expect(mayUseCheckpoint(memory, watched, undefined, inputs(ps('u1', true, 2, 'main@sha1:old')))).toBe(false);
    expect(mayUseCheckpoint(memory, watched, undefined, { ...inputs(ps('u1')), inventory: [] })).toBe(false);
  });
});

describe('settledCopies and sameCopies: the check before loading compares the copies where they were found', () => {
  // the controller's watches, as a map of namespace/name → copy; a LiveCache port over it
  const held = new Map<string, KubeObject>();
  const liveCache: LiveCache = {
    ...watched.liveCache!,
    places: async (m: ResourceMapping, namespace: string, refs: readonly ObjectRef[]) =>
      refs.every((r) => held.has(`${namespace}/${r.name}`))
        ? refs.map((r) => ({ watch: `owned|${m.kind}`, namespace, name: r.name }))
        : undefined,
    held: (p: WatchedPlace) => held.get(`${p.namespace}/${p.name}`),
  };
  const discovery: ClusterDiscovery = {
    ...watched.discovery,
    mapping: async (group: string, kind: string) => ({
      group,
      kind,
      version: 'v1',
      resource: 'configmaps',
      namespaced: true,
      verbs: ['list'],
    }),
  };
  const objects: PackageObjects = { ...watched, discovery, liveCache };
  const inventory = [{ id: 'apps_web__ConfigMap', v: 'v1' }];
  const cm = (resourceVersion: string, uid = 'c1') =>
    ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: 'apps', name: 'web', uid, resourceVersion },
    }) as KubeObject;
  const judged = new Map([[refKey({ group: '', kind: 'ConfigMap', namespace: 'apps', name: 'web' }), cm('5')]]);

  it('keeps each copy with its place and identity; any edit, re-creation or deletion reads as changed', async () => {
    held.set('apps/web', cm('5'));
    const copies = (await settledCopies(objects, inventory, judged))!;
    expect(copies).toEqual([
      { place: { watch: 'owned|ConfigMap', namespace: 'apps', name: 'web' }, uid: 'c1', resourceVersion: '5' },
    ]);
    expect(sameCopies(objects, copies)).toBe(true);
    held.set('apps/web', cm('6'));
    expect(sameCopies(objects, copies)).toBe(false);
    held.set('apps/web', cm('5', 'c2'));
    expect(sameCopies(objects, copies)).toBe(false);
    held.delete('apps/web'); // deleted, or its watch stopped
    expect(sameCopies(objects, copies)).toBe(false);
    expect(sameCopies({ ...objects, liveCache: undefined }, copies)).toBe(false);
  });

  it('keeps nothing when a watch does not hold every object, or the check judged no copy of one', async () => {
    held.clear();
    expect(await settledCopies(objects, inventory, judged)).toBeUndefined();
    held.set('apps/web', cm('5'));
    expect(await settledCopies(objects, inventory, new Map())).toBeUndefined();
    expect(await settledCopies(objects, [{ id: 'not-an-id', v: 'v1' }], judged)).toBeUndefined();
  });
});
