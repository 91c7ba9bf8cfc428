import { describe, expect, it } from 'vitest';
import { memoryWorld } from '../../test/engine/memory-ports.ts';
import type { PackageSync, Spec } from '../api/packagesync.ts';
import type { Ports } from './ports.ts';
import { SettledCheckpoints } from './settled-checkpoints.ts';
import { settledFacts } from './unchanged-check.ts';

const ps = (status: Record<string, unknown> = {}): PackageSync =>
  ({
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: { name: 'web', namespace: 'apps', uid: 'u1', generation: 2, resourceVersion: '41' },
    spec: {},
    status,
  }) as unknown as PackageSync;

const git = { source: { url: 'https://git.example/r.git', path: '.' } } as Spec;
const seen = {
  actsAsController: true,
  inputs: 'inputs-digest',
  source: { commit: 'c1', content: 'c1', revision: 'main@sha1:c1', tool: 'plain' as const },
  inventory: [],
  live: new Map(),
};
// the memory ports: a source that resolves a ref without fetching, the controller's watches (an empty inventory
// asks them nothing)
const withResolve: Ports = memoryWorld().ports;
const { objects } = withResolve;

describe('settledFacts: what lets the next check stop before loading', () => {
  it('kept for a git source acting as the controller, with its resourceVersion, Inputs and commit', async () => {
    const facts = await settledFacts(ps(), git, seen, 600_000, withResolve);
    expect(facts).toMatchObject({
      resourceVersion: '41',
      inputs: 'inputs-digest',
      source: { commit: 'c1' },
      intervalMs: 600_000,
      copies: [],
    });
  });

  it('not kept where the check before loading cannot see every input', async () => {
    // another identity or cluster: the controller's watches do not answer for it
    expect(await settledFacts(ps(), git, { ...seen, actsAsController: false }, 1, withResolve)).toBeUndefined();
    // a verified source: its keys' Secret is not compared
    const verified = { source: { ...git.source, verify: { mode: 'HEAD' } } } as unknown as Spec;
    expect(await settledFacts(ps(), verified, seen, 1, withResolve)).toBeUndefined();
    // an OCI artifact: resolved only by fetching
    const oci = { source: { path: '.', oci: { url: 'oci://r/p' } } } as unknown as Spec;
    expect(await settledFacts(ps(), oci, seen, 1, withResolve)).toBeUndefined();
    // an inventory in shards: read with the PackageSync
    expect(await settledFacts(ps({ inventory: { shards: [] } }), git, seen, 1, withResolve)).toBeUndefined();
    // a source port that cannot resolve without fetching
    const { resolve: _resolve, ...fetchOnly } = withResolve.source;
    expect(await settledFacts(ps(), git, seen, 1, { ...withResolve, source: fetchOnly })).toBeUndefined();
    // a PackageSync whose objects the controller's watches do not hold
    const unwatched = { ...objects, liveCache: undefined };
    expect(await settledFacts(ps(), git, seen, 1, { ...withResolve, objects: unwatched })).toBeUndefined();
  });
});

describe('SettledCheckpoints facts', () => {
  it('belong to the checkpoint: forgotten with it, answered with the uid they were kept for', async () => {
    const memory = new SettledCheckpoints();
    const facts = await settledFacts(ps(), git, seen, 1, withResolve)!;
    memory.remember(ps(), 'cp', facts);
    expect(memory.facts('apps', 'web')).toEqual({ uid: 'u1', facts });
    memory.remember(ps(), 'cp2');
    expect(memory.facts('apps', 'web')).toBeUndefined();
    memory.remember(ps(), 'cp', facts);
    memory.forget('apps', 'web');
    expect(memory.facts('apps', 'web')).toBeUndefined();
  });
});
