/**
 * Per-object wake-ups of the health wait (core/health/wakeups.ts) against the real control plane: a wait on
 * Deployment A, sharing its watches with a neighbour B of the same kind and namespace (a fleet in one
 * namespace), sleeps through every change of B, its ReplicaSet and its Pod, and wakes for a change of A, of
 * A's ReplicaSet and of A's Pod. Both Deployments stay unschedulable, so neither is Current and the wait
 * reads their children the whole time.
 *
 * Deterministic without timing: a watch event reaches every listener of the cache in one synchronous pass,
 * the wait's listener first (it subscribed first), so once this test's own listener has seen B's events the
 * wait has already decided; the wake it would have caused shows as a health round.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Discovery } from '../src/adapters/kube/discovery.ts';
import { WatchCache } from '../src/adapters/kube/watch-cache.ts';
import type { KubeObject } from '../src/core/object.ts';
import { OwnerLabel } from '../src/core/plan/ownership.ts';
import { watchSource, type HealthSource } from '../src/engine/health-source.ts';
import { waitUntilHealthy } from '../src/engine/wait.ts';
import { eventually, kube, trackNamespaces } from './support/cluster.ts';

const namespaces = trackNamespaces();
afterAll(() => namespaces.deleteAll());

const MARK = 'e2e.packagesync.io/mark';

function deployment(ns: string, name: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, labels: { [OwnerLabel.name]: name, [OwnerLabel.namespace]: ns } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          nodeSelector: { 'e2e.packagesync.io/no-such-node': 'true' },
          containers: [{ name: 'app', image: `registry.local/${name}:1` }],
        },
      },
    },
  };
}

describe('health wait wake-ups', () => {
  it('wakes for its own Deployment, ReplicaSet and Pod, not for a neighbour of the same kind and namespace', async () => {
    const ns = await namespaces.create('e2e-wakeups');
    const client = await kube();
    const cache = new WatchCache(client, new Discovery(client), { lingerMs: 0 });
    const apps = `/apis/apps/v1/namespaces/${ns}`;
    const core = `/api/v1/namespaces/${ns}`;
    try {
      for (const name of ['a', 'b'])
        await client.request('POST', `${apps}/deployments`, { body: deployment(ns, name) });
      // the watches the wait holds, already synced (their first lists are not what this test counts)
      await cache.hold('warm', [
        { group: 'apps', kind: 'Deployment', namespace: ns, objects: 'owned' },
        { group: 'apps', kind: 'ReplicaSet', namespace: ns, objects: 'all' },
        { group: '', kind: 'Pod', namespace: ns, objects: 'all' },
      ]);
      const list = async (path: string) => (await client.request<{ items: KubeObject[] }>('GET', path)).items;
      // settled: both ReplicaSets and Pods exist, the scheduler has said no, the Deployments report it
      const children = await eventually('each Deployment with its ReplicaSet and an unschedulable Pod', async () => {
        const deployments = await list(`${apps}/deployments`);
        const replicaSets = await list(`${apps}/replicasets`);
        const pods = await list(`${core}/pods`);
        const settled =
          deployments.every((d) => (d.status as { unavailableReplicas?: number } | undefined)?.unavailableReplicas) &&
          replicaSets.length === 2 &&
          pods.length === 2 &&
          pods.every((p) => (p.status as { conditions?: { type: string }[] }).conditions?.length);
        const of = (app: string) => ({
          rs: replicaSets.find((r) => r.metadata.ownerReferences?.[0]?.name === app)!.metadata.name,
          pod: pods.find((p) => (p.metadata.labels ?? {}).app === app)!.metadata.name,
        });
        return settled && { a: of('a'), b: of('b') };
      });

      // the wait's source counts its sleeps: a wake-up is a sleep that ended
      const source = watchSource(cache, `${ns}/a`, {
        read: () => Promise.reject(new Error('the synced watches answer every read')),
        children: () => Promise.reject(new Error('the synced watches answer every read')),
        changed: () => Promise.resolve(),
        close: () => undefined,
      });
      let sleeping = false;
      let wakes = 0;
      const counted: HealthSource = {
        ...source,
        changed: async (maxMs, signal) => {
          sleeping = true;
          await source.changed(maxMs, signal);
          sleeping = false;
          wakes++;
        },
      };
      const seen: string[] = [];
      const unsubscribe = cache.subscribe((_key, obj) => {
        const mark = obj?.metadata.annotations?.[MARK];
        if (obj && mark) seen.push(`${obj.kind}/${obj.metadata.name}/${mark}`);
      });
      const stop = new AbortController();
      let rounds = 0;
      const waited = waitUntilHealthy(counted, [deployment(ns, 'a')], {
        signal: stop.signal,
        timeoutMs: 600_000,
        known: new Map(),
        recheckMs: 600_000, // the safety net's recheck is not what this test counts
        observed: () => rounds++,
      });

      const mark = async (path: string, value: string) =>
        client.request('PATCH', path, {
          contentType: 'application/merge-patch+json',
          body: { metadata: { annotations: { [MARK]: value } } },
        });
      /** Changes one object, and resolves once the cache has delivered the change to every listener. */
      const touch = async (kind: string, path: string, name: string, value: string) => {
        await mark(path, value);
        await eventually(`the event of ${kind}/${name}`, async () => seen.includes(`${kind}/${name}/${value}`));
      };
      const asleep = () => eventually('the wait asleep until a change', async () => sleeping);

      await asleep();
      const before = { wakes, rounds };
      await touch('Deployment', `${apps}/deployments/b`, 'b', '1');
      await touch('ReplicaSet', `${apps}/replicasets/${children.b.rs}`, children.b.rs, '1');
      await touch('Pod', `${core}/pods/${children.b.pod}`, children.b.pod, '1');
      expect({ sleeping, wakes, rounds }).toEqual({ sleeping: true, ...before });

      // A's own objects each wake it
      const own: [string, string, string][] = [
        ['Pod', `${core}/pods/${children.a.pod}`, children.a.pod],
        ['ReplicaSet', `${apps}/replicasets/${children.a.rs}`, children.a.rs],
        ['Deployment', `${apps}/deployments/a`, 'a'],
      ];
      for (const [kind, path, name] of own) {
        const woken = wakes;
        await touch(kind, path, name, '1');
        await eventually(`a round after ${kind}/${name} changed`, async () => wakes > woken);
        await asleep();
      }
      expect(rounds).toBeGreaterThanOrEqual(before.rounds + own.length);

      stop.abort();
      const result = await waited;
      expect(result.ok || result.failure.reason).toBe('Superseded');
      unsubscribe();
      counted.close();
    } finally {
      cache.stop();
    }
  });
});
