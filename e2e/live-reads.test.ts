/**
 * What the planner reads before applying (src/engine/live.ts), counted on the real API server: a new
 * package costs one GET per object and no LIST; an inventoried kind costs one labelled LIST; an object
 * that exists unowned or owned by another PackageSync is still found, so adoption and conflicts are seen.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { entryOf } from '../src/core/inventory.ts';
import { KubeClient } from '../src/adapters/kube/client.ts';
import { Discovery } from '../src/adapters/kube/discovery.ts';
import { Objects } from '../src/adapters/kube/objects.ts';
import { type KubeObject } from '../src/core/object.ts';
import { ownerLabels } from '../src/core/plan/ownership.ts';
import { readLiveState } from '../src/engine/live.ts';
import { kube, kubeconfig, trackNamespaces } from './support/cluster.ts';

const namespaces = trackNamespaces();
afterAll(() => namespaces.deleteAll());

const cm = (ns: string, name: string, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
  data: { a: '1' },
});
const sa = (ns: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: { name, namespace: ns },
});

async function countingObjects(): Promise<{
  objects: Objects;
  counts: Record<string, number>;
  close(): Promise<void>;
}> {
  const counts: Record<string, number> = {};
  const client = await KubeClient.create({
    kubeconfig: kubeconfig(),
    onRequest: (verb, status, _s) => {
      const key = `${verb} ${status}`;
      counts[key] = (counts[key] ?? 0) + 1;
    },
  });
  const discovery = new Discovery(client);
  await discovery.refresh();
  for (const k of Object.keys(counts)) delete counts[k];
  return { objects: new Objects(client, discovery), counts, close: () => client.close() };
}

describe('reading live state before an apply', () => {
  it('a new package: one GET per object, no LIST; an unowned and a foreign object are found', async () => {
    const ns = await namespaces.create('e2e-live');
    const owner = { name: 'web', namespace: ns };
    const client = await kube();
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: cm(ns, 'unowned') });
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: cm(ns, 'foreign', ownerLabels({ name: 'other', namespace: ns })),
    });
    const desired = [cm(ns, 'unowned'), cm(ns, 'foreign'), cm(ns, 'fresh'), sa(ns, 'runner')];
    const { objects, counts, close } = await countingObjects();
    try {
      const live = await readLiveState(objects.forPackage(owner), desired, [], {});
      expect(live.ok).toBe(true);
      if (!live.ok) return;
      expect([...live.value.byKey.values()].map((o) => o.metadata.name).sort()).toEqual(['foreign', 'unowned']);
      expect(counts).toEqual({ 'GET 200': 2, 'GET 404': 2 });
    } finally {
      await close();
    }
  });

  it('an inventoried kind: one labelled LIST finds what is owned, GETs only for what it did not return', async () => {
    const ns = await namespaces.create('e2e-live');
    const owner = { name: 'web', namespace: ns };
    const client = await kube();
    for (const name of ['one', 'two']) {
      await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: cm(ns, name, ownerLabels(owner)) });
    }
    const inventory = [cm(ns, 'one'), cm(ns, 'two')].map(entryOf);
    const desired = [cm(ns, 'one'), cm(ns, 'two'), cm(ns, 'three')];
    const { objects, counts, close } = await countingObjects();
    try {
      const live = await readLiveState(objects.forPackage(owner), desired, inventory, {});
      expect(live.ok).toBe(true);
      if (!live.ok) return;
      expect([...live.value.byKey.values()].map((o) => o.metadata.name).sort()).toEqual(['one', 'two']);
      // the LIST (200) and the GET of `three` (404)
      expect(counts).toEqual({ 'GET 200': 1, 'GET 404': 1 });
    } finally {
      await close();
    }
  });
});
