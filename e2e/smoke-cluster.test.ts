/**
 * Proves the local control plane is a real one: controllers, garbage collection, namespace deletion
 * and server-side apply field ownership all behave as on any cluster.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { KubeApiError, isNotFound } from '../src/adapters/kube/client.ts';
import { createNamespace, eventually, kube, kubectl, uniqueName } from './support/cluster.ts';

interface Obj {
  metadata: { name: string; uid: string; resourceVersion: string };
  status?: { conditions?: { type: string; status: string }[]; availableReplicas?: number; phase?: string };
}

const namespaces: string[] = [];
afterAll(async () => {
  const client = await kube();
  await Promise.all(
    namespaces.map((ns) => client.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined)),
  );
});

describe('the local control plane', () => {
  it('serves Kubernetes v1.36 and has a Ready kwok Node', async () => {
    const version = JSON.parse(await kubectl('version', '-o', 'json')) as { serverVersion: { gitVersion: string } };
    expect(version.serverVersion.gitVersion).toMatch(/^v1\.36\./);
    const nodes = JSON.parse(await kubectl('get', 'nodes', '-o', 'json')) as { items: Obj[] };
    const ready = nodes.items.filter((n) =>
      n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    expect(ready.length).toBeGreaterThan(0);
  });

  it('keeps the kwok Node alive the way a kubelet does: a Lease renewed well within its duration', async () => {
    // Without it the node lifecycle controller marks the Node NotReady every minute and every Pod on it
    // Ready=False for good (nothing makes them Ready again): health waits then fail at random.
    const client = await kube();
    const nodes = await client.request<{ items: Obj[] }>('GET', '/api/v1/nodes');
    for (const node of nodes.items) {
      const lease = await client.request<{ spec: { renewTime?: string; leaseDurationSeconds?: number } }>(
        'GET',
        `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${node.metadata.name}`,
      );
      const duration = lease.spec.leaseDurationSeconds ?? 0;
      expect(duration).toBeGreaterThan(0);
      const renewed = await eventually(`Lease of ${node.metadata.name} renewed`, async () => {
        const l = await client.request<{ spec: { renewTime?: string } }>(
          'GET',
          `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${node.metadata.name}`,
        );
        const age = Date.now() - Date.parse(l.spec.renewTime ?? '1970-01-01T00:00:00Z');
        return age < (duration * 1000) / 2 && age;
      });
      expect(renewed).toBeLessThan((duration * 1000) / 2);
    }
  });

  it('rolls out a Deployment with 2 replicas until it is Available', async () => {
    const ns = await createNamespace('smoke-deploy');
    namespaces.push(ns);
    const client = await kube();
    await client.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
          },
        },
      },
    });
    const available = await eventually('Deployment web Available with 2 replicas', async () => {
      const d = await client.request<Obj>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`);
      const cond = d.status?.conditions?.find((c) => c.type === 'Available');
      return cond?.status === 'True' && d.status?.availableReplicas === 2 && d;
    });
    expect(available.status?.availableReplicas).toBe(2);
    const pods = await client.request<{ items: Obj[] }>('GET', `/api/v1/namespaces/${ns}/pods`);
    expect(pods.items.filter((p) => p.status?.phase === 'Running')).toHaveLength(2);
  });

  it('deletes a Namespace that holds objects, and the Namespace disappears', async () => {
    const ns = await createNamespace('smoke-nsdel');
    const client = await kube();
    for (const name of ['a', 'b']) {
      await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } },
      });
    }
    await client.request('DELETE', `/api/v1/namespaces/${ns}`);
    await eventually('the namespace to be gone', async () => {
      try {
        await client.request('GET', `/api/v1/namespaces/${ns}`);
        return false;
      } catch (e) {
        return isNotFound(e);
      }
    });
  });

  it('garbage-collects a ConfigMap whose owner was deleted', async () => {
    const ns = await createNamespace('smoke-gc');
    namespaces.push(ns);
    const client = await kube();
    const owner = await client.request<Obj>('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } },
    });
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'dependent',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }],
        },
      },
    });
    await client.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/owner`);
    await eventually('the dependent ConfigMap to be garbage-collected', async () => {
      try {
        await client.request('GET', `/api/v1/namespaces/${ns}/configmaps/dependent`);
        return false;
      } catch (e) {
        return isNotFound(e);
      }
    });
  });

  it('answers 409 when a second field manager server-side applies a field the first owns', async () => {
    const ns = await createNamespace('smoke-ssa');
    namespaces.push(ns);
    const client = await kube();
    const name = uniqueName('cm');
    const path = `/api/v1/namespaces/${ns}/configmaps/${name}`;
    const apply = (manager: string, value: string) =>
      client.request('PATCH', path, {
        query: { fieldManager: manager },
        contentType: 'application/apply-patch+yaml',
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { key: value } },
      });
    await apply('first', 'one');
    const err = await apply('second', 'two').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(409);
    expect((err as KubeApiError).message).toContain('first');
    const live = await client.request<{ data: { key: string } }>('GET', path);
    expect(live.data.key).toBe('one');
  });
});
