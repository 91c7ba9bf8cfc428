/**
 * A new object no PackageSync owns is not read before its apply (docs/adr/0029): when the controller's synced
 * owned-objects watch of its kind and namespace does not hold it, the plan skips its GET and the apply goes
 * create-only. Counted on the real API server, with the cases the old GET existed for: an unowned object is
 * still adopted (fields another manager set taken over), another PackageSync's object is still refused and
 * left untouched (here: one created between the plan and the apply, which the watch could not have shown),
 * and an unowned object whose live copy says apply Ignore is still left alone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../src/adapters/kube/client.ts';
import { Discovery } from '../src/adapters/kube/discovery.ts';
import { WatchedLive } from '../src/adapters/kube/live-cache.ts';
import { Objects, type PackageObjects } from '../src/adapters/kube/objects.ts';
import { OwnWrites } from '../src/adapters/kube/own-writes.ts';
import { WatchCache } from '../src/adapters/kube/watch-cache.ts';
import type { InventoryEntry } from '../src/api/packagesync.ts';
import { refKey, refOf, type KubeObject } from '../src/core/object.ts';
import { ownerLabels, type Owner } from '../src/core/plan/ownership.ts';
import { applyAndPrune } from '../src/engine/act.ts';
import { planAgainstLive } from '../src/engine/package-plan.ts';
import { eventually, kube, kubeconfig, trackNamespaces } from './support/cluster.ts';

const namespaces = trackNamespaces();
afterAll(() => namespaces.deleteAll());

type Labels = Record<string, string>;
const cm = (ns: string, name: string, data: Record<string, string>, labels?: Labels, annotations?: Labels) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
  data,
});
const sa = (ns: string, name: string, owner: Owner): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name, namespace: ns, labels: ownerLabels(owner) },
});

/** A controller's view: a counting client, and the owned ConfigMap watch of `ns` already held and synced. */
async function setUp(ns: string, owner: Owner) {
  const counts: Record<string, number> = {};
  const client = await KubeClient.create({
    kubeconfig: kubeconfig(),
    onRequest: (verb, status) => {
      counts[`${verb} ${status}`] = (counts[`${verb} ${status}`] ?? 0) + 1;
    },
  });
  const discovery = new Discovery(client);
  await discovery.refresh();
  const watchClient = await KubeClient.create({ kubeconfig: kubeconfig() });
  const watches = new WatchCache(watchClient, discovery, { lingerMs: 0 });
  const ownWrites = new OwnWrites();
  const all = new Objects(client, discovery);
  all.ownWrites = ownWrites;
  all.liveCache = new WatchedLive(watches, ownWrites, 10_000);
  const [key] = await watches.hold('test', [{ group: '', kind: 'ConfigMap', namespace: ns, objects: 'owned' }]);
  await watches.synced([key], 10_000);
  const reset = () => Object.keys(counts).forEach((k) => delete counts[k]);
  reset();
  return {
    objects: all.forPackage(owner),
    counts,
    reset,
    close: async () => {
      watches.stop();
      await client.close();
      await watchClient.close();
    },
  };
}

/** Plans and applies as the reconcile does (no prune: nothing leaves the package here). */
async function reconcileOnce(objects: PackageObjects, desired: KubeObject[], inventory: InventoryEntry[] = []) {
  const planned = await planAgainstLive(objects, desired, inventory);
  if (!planned.ok) return { planned };
  const saved: InventoryEntry[][] = [];
  const acted = await applyAndPrune(
    objects,
    planned.value.plan,
    planned.value.live.byKey,
    { prune: false, force: false, signal: new AbortController().signal, concurrency: 4 },
    { saveInventory: async (entries) => void saved.push(entries), handled: () => undefined },
  );
  return { planned, acted, saved };
}

const path = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;

describe('a new object no PackageSync owns is applied create-only, not read first', () => {
  it('a brand-new package: no GET for a watched kind; the object is what a plain apply makes', async () => {
    const ns = await namespaces.create('e2e-create-only');
    const owner = { name: 'web', namespace: ns };
    const env = await setUp(ns, owner);
    try {
      const desired = [cm(ns, 'a', { k: '1' }, ownerLabels(owner)), sa(ns, 'runner', owner)];
      const { planned, acted, saved } = await reconcileOnce(env.objects, desired);
      expect(planned.ok && [...planned.value.plan.createOnly].sort()).toEqual([`/ConfigMap/${ns}/a`]);
      expect(acted?.ok).toBe(true);
      // the ConfigMap: one create-only apply; the ServiceAccount, whose kind no watch holds, is read as before
      expect(env.counts).toEqual({ 'PATCH 201': 2, 'GET 404': 1 });
      // the inventory saved before applying lists both
      expect(saved?.[0]?.map((e) => e.id).sort()).toEqual([`${ns}_a__ConfigMap`, `${ns}_runner__ServiceAccount`]);

      const admin = await kube();
      const made = await admin.request<KubeObject>('GET', path(ns, 'a'));
      expect(made.metadata.labels).toEqual(ownerLabels(owner));
      const fields = made.metadata.managedFields as { manager: string; operation: string; fieldsV1: object }[];
      expect(fields.map((f) => `${f.manager}/${f.operation}`)).toEqual(['packagesync/Apply']);
      expect(JSON.stringify(fields[0]!.fieldsV1)).not.toContain('resourceVersion');
      // a plain apply of what was sent changes nothing: the create-only apply made what a plain apply makes
      const sent = planned.ok ? planned.value.plan.graph.nodes.find((n) => n.ref.name === 'a')!.object : desired[0]!;
      const again = await env.objects.apply(sent);
      expect(again.created).toBe(false);
      expect(again.object.metadata.resourceVersion).toBe(made.metadata.resourceVersion);
    } finally {
      await env.close();
    }
  });

  it('an unowned object is adopted: its create is refused, then it is read and applied with force', async () => {
    const ns = await namespaces.create('e2e-create-only');
    const owner = { name: 'web', namespace: ns };
    const admin = await kube();
    await admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      query: { fieldManager: 'legacy-tool' },
      body: cm(ns, 'legacy', { k: 'old', theirs: 'kept' }),
    });
    const env = await setUp(ns, owner);
    try {
      const { planned, acted } = await reconcileOnce(env.objects, [cm(ns, 'legacy', { k: 'new' }, ownerLabels(owner))]);
      expect(planned.ok && [...planned.value.plan.createOnly]).toEqual([`/ConfigMap/${ns}/legacy`]);
      expect(acted?.ok).toBe(true);
      // refused create (409), the read, the adopting apply
      expect(env.counts).toEqual({ 'PATCH 409': 1, 'GET 200': 1, 'PATCH 200': 1 });
      const live = await admin.request<KubeObject>('GET', path(ns, 'legacy'));
      expect(live.data).toEqual({ k: 'new', theirs: 'kept' });
      expect(live.metadata.labels).toEqual(ownerLabels(owner));
      // the field legacy-tool set and the package sets is ours now (as adoption does, docs/adr/0006)
      const legacy = (live.metadata.managedFields as { manager: string; fieldsV1: object }[]).find(
        (f) => f.manager === 'legacy-tool',
      );
      expect(JSON.stringify(legacy?.fieldsV1 ?? {})).not.toContain('f:k');
    } finally {
      await env.close();
    }
  });

  it("another PackageSync's object: OwnershipConflict, nothing written to it", async () => {
    const ns = await namespaces.create('e2e-create-only');
    const owner = { name: 'web', namespace: ns };
    const other = { name: 'api', namespace: ns };
    const admin = await kube();
    const env = await setUp(ns, owner);
    try {
      // created between the plan and the apply: no watch could have shown it to the plan
      const planned = await planAgainstLive(env.objects, [cm(ns, 'shared', { k: 'mine' }, ownerLabels(owner))], []);
      expect(planned.ok && [...planned.value.plan.createOnly]).toEqual([`/ConfigMap/${ns}/shared`]);
      if (!planned.ok) return;
      const theirs = await admin.request<KubeObject>('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        body: cm(ns, 'shared', { k: 'theirs' }, ownerLabels(other)),
      });
      env.reset();
      const acted = await applyAndPrune(
        env.objects,
        planned.value.plan,
        planned.value.live.byKey,
        { prune: false, force: false, signal: new AbortController().signal, concurrency: 4 },
        { saveInventory: async () => undefined, handled: () => undefined },
      );
      expect(!acted.ok && acted.failure.reason).toBe('OwnershipConflict');
      expect(!acted.ok && acted.failure.message).toContain(`belongs to PackageSync ${ns}/api`);
      expect(env.counts).toEqual({ 'PATCH 409': 1, 'GET 200': 1 });
      const live = await admin.request<KubeObject>('GET', path(ns, 'shared'));
      expect(live.metadata.resourceVersion).toBe(theirs.metadata.resourceVersion);

      // once the watch shows it, the next plan sees the conflict before applying anything, as before
      await eventually('the watch shows their object', async () => {
        const r = await planAgainstLive(env.objects, [cm(ns, 'shared', { k: 'mine' }, ownerLabels(owner))], []);
        return !r.ok && r.failure.reason === 'OwnershipConflict';
      });
    } finally {
      await env.close();
    }
  });

  it('an unowned object whose live copy says apply Ignore is left alone and out of health', async () => {
    const ns = await namespaces.create('e2e-create-only');
    const owner = { name: 'web', namespace: ns };
    const admin = await kube();
    const before = await admin.request<KubeObject>('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: cm(ns, 'hands-off', { k: 'theirs' }, undefined, { 'packagesync.io/apply': 'Ignore' }),
    });
    const env = await setUp(ns, owner);
    try {
      const desired = cm(ns, 'hands-off', { k: 'mine' }, ownerLabels(owner));
      const { acted } = await reconcileOnce(env.objects, [desired]);
      expect(acted?.ok && [...acted.value.ignored]).toEqual([refKey(refOf(desired))]);
      expect(env.counts).toEqual({ 'PATCH 409': 1, 'GET 200': 1 });
      const live = await admin.request<KubeObject>('GET', path(ns, 'hands-off'));
      expect(live.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    } finally {
      await env.close();
    }
  });
});
