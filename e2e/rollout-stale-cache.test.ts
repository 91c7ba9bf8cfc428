/**
 * A PackageSyncSet plans its waves from a consistent read of the registered clusters, not from a watch cache that
 * is behind (docs/adr/0042). Two watches (cluster Secrets, sets) have no order between them: a set created right
 * after its cluster Secrets could reach the controller first, plan waves without those clusters, and leave them out
 * of the rollout until the next revision (found while chasing CI stop 44, whose cause was another: a test polling
 * for a passing state). Here the controller's cluster-Secret watch is stopped after its first LIST, so its cache
 * is behind for the whole test: deterministic, where the race is not. The set controller runs in this process
 * against the real control plane; its ref resolves to a fixed commit (the git side is not what is tested).
 */
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { SetController } from '../src/controller/rollout/set-controller.ts';
import type { PackageSyncSet } from '../src/api/packagesyncset.ts';
import { eventually, kube, trackNamespaces } from './support/cluster.ts';
import { SHARD_LABEL } from './support/controller.ts';
import { children, clusterSecret, createSet, getSet, patchSet } from './support/rollout.ts';

const COMMIT = 'a'.repeat(40);
const namespaces = trackNamespaces();
let controller: SetController | undefined;

afterAll(async () => {
  await controller?.stop();
  await namespaces.deleteAll();
}, 120_000);

const targetWaves = (s: PackageSyncSet) => Object.fromEntries((s.status?.targets ?? []).map((t) => [t.name, t.wave]));

describe('PackageSyncSet: a cluster-Secret watch that is behind', () => {
  it('plans every cluster registered before the set, and keeps them on later passes', async () => {
    const ns = await namespaces.create('set-stale');
    controller = new SetController({
      client: await kube(),
      source: { resolve: async () => ({ ok: true, value: COMMIT }) },
      readSecret: async () => undefined,
      packageSyncs: new Map(),
      packageSyncsSynced: Promise.resolve(),
      log: pino({ level: 'silent' }),
      watchNamespace: ns,
      // only this set: no controller of another test file picks it up, nor this one theirs
      labelSelector: `${SHARD_LABEL}=${ns}`,
    });
    controller.start();
    await controller.clusterSecrets.synced;
    // the cache now holds no cluster of this namespace, and sees none of what follows
    controller.clusterSecrets.stop();

    await clusterSecret(ns, 'a', { ring: 'canary' });
    await clusterSecret(ns, 'b', { ring: 'main' });
    await createSet(ns, {
      apiVersion: 'packagesync.io/v1alpha1',
      kind: 'PackageSyncSet',
      metadata: { name: 'web', labels: { [SHARD_LABEL]: ns } },
      spec: {
        template: {
          spec: { source: { url: 'https://git.invalid/repo.git', ref: { branch: 'main' } }, interval: '1m' },
        },
        generators: { clusters: {} },
        rollout: {
          waves: [{ name: 'canary', targets: { selector: { matchLabels: { ring: 'canary' } } } }, { name: 'main' }],
        },
      },
    });
    const planned = await eventually('the rollout planned', async () => {
      const s = await getSet(ns, 'web');
      return s.status?.revision === `main@sha1:${COMMIT}` && s;
    });
    expect(targetWaves(planned)).toEqual({ a: 'canary', b: 'main' });
    expect(planned.status!.waves!.map((w) => [w.name, w.size])).toEqual([
      ['canary', 1],
      ['main', 1],
    ]);
    // the first wave started: its cluster's child is pinned
    await eventually('the canary child', async () =>
      (await children(ns, 'web')).some((c) => c.spec.source.ref?.commit === COMMIT),
    );

    // a later pass (a spec edit) reads the same stale cache: the planned targets stay, with their waves and child
    await patchSet(ns, 'web', { spec: { template: { spec: { interval: '2m' } } } });
    const generation = (await getSet(ns, 'web')).metadata.generation;
    const later = await eventually('the edit observed', async () => {
      const s = await getSet(ns, 'web');
      return s.status?.observedGeneration === generation && s;
    });
    expect(targetWaves(later)).toEqual({ a: 'canary', b: 'main' });
    expect((await children(ns, 'web')).map((c) => c.metadata.name)).toHaveLength(1);
  });
});
