/**
 * Reads the controller answers from its watches instead of the API server (issue 18: requests per unit),
 * counted on the real API server, and the cases where it must not trust them:
 * - the reconcile's load of a PackageSync (controller/watched-package-syncs.ts): from the watch unless our own
 *   last write is newer than the watch's copy, or someone wrote after us;
 * - the planner's live reads (adapters/kube/live-cache.ts): from the owned-objects watches, except a copy
 *   lagging behind our own apply, an object the watch does not hold, or a package acting as a ServiceAccount.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../src/adapters/kube/client.ts';
import { Discovery } from '../src/adapters/kube/discovery.ts';
import { Informer } from '../src/adapters/kube/informer.ts';
import { WatchedLive } from '../src/adapters/kube/live-cache.ts';
import { Objects } from '../src/adapters/kube/objects.ts';
import { OwnWrites } from '../src/adapters/kube/own-writes.ts';
import { packageSyncCollectionPath } from '../src/adapters/kube/packagesyncs.ts';
import { WatchCache } from '../src/adapters/kube/watch-cache.ts';
import type { PackageSync } from '../src/api/packagesync.ts';
import { WatchedPackageSyncs } from '../src/controller/watched-package-syncs.ts';
import { entryOf } from '../src/core/inventory.ts';
import type { KubeObject } from '../src/core/object.ts';
import { ownerLabels } from '../src/core/plan/ownership.ts';
import { readLiveState } from '../src/engine/live.ts';
import { eventually, kube, kubeconfig, trackNamespaces } from './support/cluster.ts';
import { createPackageSync, packageSync } from './support/controller.ts';

const namespaces = trackNamespaces();
afterAll(() => namespaces.deleteAll());

async function countingClient(): Promise<{ client: KubeClient; counts: Record<string, number>; reset(): void }> {
  const counts: Record<string, number> = {};
  const client = await KubeClient.create({
    kubeconfig: kubeconfig(),
    onRequest: (verb, status) => {
      counts[`${verb} ${status}`] = (counts[`${verb} ${status}`] ?? 0) + 1;
    },
  });
  return { client, counts, reset: () => Object.keys(counts).forEach((k) => delete counts[k]) };
}

const cm = (ns: string, name: string, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
  data: { a: '1' },
});

describe('the reconcile loads a PackageSync from the watch when its copy is current', () => {
  it('no request until our own write; a GET while the watch lags behind it or after someone else wrote', async () => {
    const ns = await namespaces.create('e2e-watched');
    // no controller watches this shard: only the test reads and writes
    await createPackageSync(packageSync(ns, 'unit', 'nobody', { source: { url: 'https://example.com/x.git' } }));
    const { client, counts, reset } = await countingClient();
    const informer = new Informer(await kube(), { path: packageSyncCollectionPath(ns) });
    try {
      informer.start();
      await informer.synced;
      const syncs = new WatchedPackageSyncs(client);
      syncs.readFrom(informer.cache);
      reset();

      // nothing written since start: the watch's copy is the one whose event queued the key
      const first = (await syncs.get(ns, 'unit'))!;
      expect(first.metadata.name).toBe('unit');
      expect(counts).toEqual({});

      // our write: until the watch shows it, a GET answers; once it does, the watch again
      const written = (await syncs.writeStatus(first, { lastAttemptedRevision: 'rev-1' }))!;
      reset();
      await eventually(
        'the watch shows our write',
        async () => informer.cache.get(`${ns}/unit`)?.metadata.resourceVersion === written.metadata.resourceVersion,
      );
      const again = (await syncs.get(ns, 'unit'))!;
      expect(again.status?.lastAttemptedRevision).toBe('rev-1');
      expect(counts).toEqual({});
      // a copy of its own: editing what the reconcile got leaves the watch's object alone
      again.status!.lastAttemptedRevision = 'edited';
      expect((informer.cache.get(`${ns}/unit`) as unknown as PackageSync).status?.lastAttemptedRevision).toBe('rev-1');

      // someone else writes after us: the watch's copy is not our last write, so a GET decides, then trusts it
      await (
        await kube()
      ).request('PATCH', `${packageSyncCollectionPath(ns)}/unit`, {
        contentType: 'application/merge-patch+json',
        body: { metadata: { annotations: { touched: 'yes' } } },
      });
      await eventually('the watch shows their write', async () =>
        Boolean(informer.cache.get(`${ns}/unit`)?.metadata.annotations?.touched),
      );
      reset();
      expect((await syncs.get(ns, 'unit'))?.metadata.annotations?.touched).toBe('yes');
      expect(counts).toEqual({ 'GET 200': 1 });
      reset();
      await syncs.get(ns, 'unit');
      expect(counts).toEqual({});
      expect(syncs.reads).toEqual({ watch: 3, get: 1 });
      // deleted: what we wrote to it is forgotten (run.ts calls this on the watch's delete event)
      const last = await syncs.writeStatus((await syncs.get(ns, 'unit'))!, { lastAttemptedRevision: 'rev-2' });
      expect(syncs.remembered).toBe(1);
      syncs.forget(last as unknown as KubeObject);
      expect(syncs.remembered).toBe(0);
    } finally {
      informer.stop();
      await client.close();
    }
  });

  it('a status write from a stale watch copy still keeps the newer inventory (the guarded write re-reads with a GET)', async () => {
    const ns = await namespaces.create('e2e-watched');
    const created = await createPackageSync(
      packageSync(ns, 'rv', 'nobody', { source: { url: 'https://example.com/x.git' } }),
    );
    const entry = (name: string) => ({ id: `${ns}_${name}__ConfigMap`, v: 'v1' });
    const syncs = new WatchedPackageSyncs(await kube());
    // a frozen "watch" that never sees any write: the worst lag there is
    syncs.readFrom(new Map([[`${ns}/rv`, created as unknown as KubeObject]]));
    const other = new WatchedPackageSyncs(await kube());
    await other.writeStatus(created, { inventory: { entries: [entry('a'), entry('b')] } });
    const stale = (await syncs.get(ns, 'rv'))!;
    expect(stale.status?.inventory).toBeUndefined();
    const written = await syncs.writeStatus(stale, { inventory: { entries: [entry('c')] } });
    expect(written?.status?.inventory?.entries.map((e) => e.id).sort()).toEqual(
      [entry('a'), entry('b'), entry('c')].map((e) => e.id),
    );
  });
});

describe('the planner reads live objects from the owned-objects watches', () => {
  async function setUp(ns: string) {
    const { client, counts, reset } = await countingClient();
    const discovery = new Discovery(client);
    await discovery.refresh();
    const watchClient = await KubeClient.create({ kubeconfig: kubeconfig() });
    const watches = new WatchCache(watchClient, discovery, { lingerMs: 0 });
    const ownWrites = new OwnWrites();
    const live = new WatchedLive(watches, ownWrites, 10_000);
    const objects = new Objects(client, discovery);
    objects.ownWrites = ownWrites;
    objects.liveCache = live;
    await watches.hold('test', [{ group: '', kind: 'ConfigMap', namespace: ns, objects: 'owned' }]);
    reset();
    return {
      objects,
      ownWrites,
      live,
      counts,
      reset,
      watches,
      close: async () => {
        watches.stop();
        await client.close();
        await watchClient.close();
      },
    };
  }

  it('a settled package costs no request; a copy lagging behind our apply and one the watch lacks are read', async () => {
    const ns = await namespaces.create('e2e-watched');
    const owner = { name: 'web', namespace: ns };
    const admin = await kube();
    const made: KubeObject[] = [];
    for (const name of ['one', 'two', 'gone']) {
      made.push(
        await admin.request<KubeObject>('POST', `/api/v1/namespaces/${ns}/configmaps`, {
          body: cm(ns, name, ownerLabels(owner)),
        }),
      );
    }
    const env = await setUp(ns);
    try {
      await eventually(
        'the watch holds them',
        async () =>
          (
            await env.live.lookup(
              (await env.objects.discovery.mapping('', 'ConfigMap'))!,
              ns,
              made.map((o) => ({ group: '', kind: 'ConfigMap', namespace: ns, name: o.metadata.name })),
            )
          ).size === 3,
      );
      env.reset();
      const inventory = made.map(entryOf);
      const desired = [cm(ns, 'one'), cm(ns, 'two')];
      const view = env.objects.forPackage(owner);
      const settled = await readLiveState(view, desired, inventory, {});
      expect(settled.ok && [...settled.value.byKey.values()].map((o) => o.metadata.name).sort()).toEqual([
        'gone',
        'one',
        'two',
      ]);
      expect(env.counts).toEqual({});

      // our apply produced a resourceVersion the watch may not show yet: that one object is read with a GET
      env.ownWrites.record({ ...made[0]!, metadata: { ...made[0]!.metadata, resourceVersion: '999999999' } });
      env.reset();
      await readLiveState(view, desired, inventory, {});
      expect(env.counts).toEqual({ 'GET 200': 1 });

      // once the watch has delivered our write, a later copy (a controller's status on top of it) is trusted
      // as the applier does it: begun before the request, so the watch's echo waits for the recorded answer
      const done = env.ownWrites.begin(made[0]!);
      const ours = await admin.request<KubeObject>('PATCH', `/api/v1/namespaces/${ns}/configmaps/one`, {
        contentType: 'application/merge-patch+json',
        body: { data: { a: '2' } },
      });
      env.ownWrites.record(ours);
      done();
      await eventually('the watch delivers our write', async () => env.ownWrites.caughtUp(ours.metadata.uid!));
      await admin.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/one`, {
        contentType: 'application/merge-patch+json',
        body: { metadata: { annotations: { 'deployment.kubernetes.io/revision': '1' } } },
      });
      await eventually('the watch shows their change', async () => {
        const [o] = (await env.watches.peekOwned('', 'ConfigMap', ns, [{ namespace: ns, name: 'one' }], 0)) ?? [];
        return o?.metadata.annotations?.['deployment.kubernetes.io/revision'] === '1';
      });
      env.reset();
      await readLiveState(view, desired, inventory, {});
      expect(env.counts).toEqual({});

      // an inventoried object the watch lacks (deleted, or not labelled ours): the labelled LIST looks for it
      env.reset();
      await readLiveState(view, desired, [...inventory, entryOf(cm(ns, 'never-made'))], {});
      // one labelled LIST, nothing else
      expect(env.counts).toEqual({ 'GET 200': 1 });

      // a PackageSync acting as a ServiceAccount reads as that ServiceAccount, never from the controller's watches
      const tenant = env.objects.forPackage(owner, 'deployer');
      expect(tenant.liveCache).toBeUndefined();
    } finally {
      await env.close();
    }
  });

  it('a desired object the watch does not hold (unowned, or new) is read with a GET', async () => {
    const ns = await namespaces.create('e2e-watched');
    const owner = { name: 'web', namespace: ns };
    const admin = await kube();
    const mine = await admin.request<KubeObject>('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: cm(ns, 'mine', ownerLabels(owner)),
    });
    await admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: cm(ns, 'unowned') });
    const env = await setUp(ns);
    try {
      await eventually(
        'the watch holds ours',
        async () =>
          (
            await env.live.lookup((await env.objects.discovery.mapping('', 'ConfigMap'))!, ns, [
              { group: '', kind: 'ConfigMap', namespace: ns, name: 'mine' },
            ])
          ).size === 1,
      );
      env.reset();
      const live = await readLiveState(
        env.objects.forPackage(owner),
        [cm(ns, 'mine'), cm(ns, 'unowned'), cm(ns, 'fresh')],
        [entryOf(mine)],
        {},
      );
      expect(live.ok && [...live.value.byKey.values()].map((o) => o.metadata.name).sort()).toEqual(['mine', 'unowned']);
      expect(env.counts).toEqual({ 'GET 200': 1, 'GET 404': 1 });
    } finally {
      await env.close();
    }
  });

  it('an object the watch sees deleted is forgotten by OwnWrites (the soak deletes units all day)', async () => {
    const ns = await namespaces.create('e2e-watched');
    const admin = await kube();
    const env = await setUp(ns);
    try {
      const made = await admin.request<KubeObject>('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        body: cm(ns, 'short-lived', ownerLabels({ name: 'web', namespace: ns })),
      });
      env.ownWrites.record(made);
      expect(env.ownWrites.size).toBe(1);
      await admin.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/short-lived`);
      await eventually('the delete event drops it', async () => env.ownWrites.size === 0);
      // nothing remembered of it: no copy of that uid is held back any more
      expect(env.ownWrites.trustsCopy(made.metadata.uid, '0')).toBe(true);
    } finally {
      await env.close();
    }
  });
});
