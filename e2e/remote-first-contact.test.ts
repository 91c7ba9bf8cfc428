/**
 * A fleet's PackageSyncs that name the same kubeconfig Secret reach their cluster through one client: when many
 * make first contact at once (a set's wave, a controller's restart), one client and one discovery are made for
 * them all. Before, each made its own, and all but the last stayed open with nothing referring to them.
 * Against the local control plane, the cluster Secret holding its own admin kubeconfig.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemoteClusters } from '../src/adapters/kube/remote-clusters.ts';
import { createNamespace, deleteNamespace, kube } from './support/cluster.ts';
import { localKubeconfigText, registerCluster } from './support/fleet-clusters.ts';

let ns: string;

beforeAll(async () => {
  ns = await createNamespace('first-contact');
  await registerCluster(ns, 'self', localKubeconfigText());
});

afterAll(async () => {
  if (ns) await deleteNamespace(ns);
});

describe('RemoteClusters: first contact', () => {
  it('eight reconciles reaching one cluster Secret at once share one client; a new Secret version gets one new one', async () => {
    const home = await kube();
    const remote = new RemoteClusters(home);
    try {
      const reach = () => Promise.all(Array.from({ length: 8 }, () => remote.objectsFor(ns, { name: 'self' })));
      const first = await reach();
      const objects = first.map((r) => (r.ok ? r.value : r.failure.message));
      expect(new Set(objects).size).toBe(1);
      expect(typeof objects[0]).toBe('object');
      expect(remote.size).toBe(1);

      // the Secret rotated: its next version is contacted once, and replaces the old client
      await home.request('PATCH', `/api/v1/namespaces/${ns}/secrets/self`, {
        contentType: 'application/merge-patch+json',
        body: { metadata: { labels: { rotated: 'yes' } } },
      });
      const second = await reach();
      const rotated = second.map((r) => (r.ok ? r.value : r.failure.message));
      expect(new Set(rotated).size).toBe(1);
      expect(rotated[0]).not.toBe(objects[0]);
      expect(remote.size).toBe(1);
    } finally {
      await remote.close();
    }
  });
});
