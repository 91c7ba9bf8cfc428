/**
 * The namespace policy decides on what render saw; render knows a kind's scope from discovery, loaded when
 * the controller started. A cluster-scoped kind installed later is unknown to render, so an object of it
 * that names the tenant's namespace looks namespaced and passes the policy. Applying it must not then
 * quietly drop the namespace and create a cluster-scoped object on the tenant's behalf.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kube, uniqueName } from './support/cluster.ts';
import { createPackageSync, packageSync, waitCondition, type ControllerHandle } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { configMap, get, ready } from './support/safety.ts';

let confined: ControllerHandle;
let fx: GitEnvWithController;
const group = `${uniqueName('scope')}.e2e.packagesync.io`;
const crdName = `gadgets.${group}`;

beforeAll(async () => {
  // started (and its discovery loaded) before the cluster-scoped kind exists
  fx = await startGitEnv({ allowCrossNamespace: false });
  confined = fx.controller;
  for (let i = 0; i < 300 && !confined.logs.some((l) => l.includes('PackageSync watch synced')); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
});

afterAll(async () => {
  await fx?.dispose();
  const client = await kube();
  await client.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`).catch(() => 0);
});

describe('a cluster-scoped kind the controller learns of after rendering', () => {
  it('is never applied cluster-scoped for a tenant, even when the object names the tenant namespace', async () => {
    const client = await kube();
    await client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: crdName },
        spec: {
          group,
          scope: 'Cluster',
          names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          ],
        },
      },
    });
    for (let i = 0; i < 100; i++) {
      const crd = await get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`);
      const conditions = (crd?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
      if (conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const tenant = await fx.namespace('scope-tenant');
    const gadget = uniqueName('gadget');
    const { url } = await fx.repo('scope', {
      'a.yaml': configMap('a', { k: 'v' }),
      'g.yaml': `apiVersion: ${group}/v1\nkind: Gadget\nmetadata: {name: ${gadget}, namespace: ${tenant}}\n`,
    });
    await createPackageSync(packageSync(tenant, 'scope', confined.shard, { source: { url }, retryInterval: '1s' }));

    // render refreshes discovery for a kind it does not know, so even the first attempt knows the scope
    // and the policy names it; nothing reaches the API server (objects.ts would still refuse a kind whose
    // scope changed between render and apply)
    const ps = await waitCondition(tenant, 'scope', 'Ready', 'False', 'NamespaceNotAllowed');
    expect(ready(ps)?.message).toContain(`Gadget.${group}/${gadget} is in cluster scope`);
    expect(await get(`/apis/${group}/v1/gadgets/${gadget}`)).toBeUndefined();
    expect(await get(`/api/v1/namespaces/${tenant}/configmaps/a`)).toBeUndefined();
    const events = await client.request<{ items: { reason: string; message: string }[] }>(
      'GET',
      `/api/v1/namespaces/${tenant}/events`,
    );
    expect(events.items.map((e) => e.reason)).not.toContain('ApplyFailed');
    expect(ps.status?.lastAppliedRevision).toBeUndefined();
  });
});
