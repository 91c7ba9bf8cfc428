/**
 * Multi-tenancy on the real API server: a PackageSync with serviceAccountName (or the controller's
 * --default-service-account) reads and writes its objects as that ServiceAccount, so RBAC decides —
 * and a refusal is reported with verb and resource, never retried as the controller. Without
 * --allow-cross-namespace-objects, a PackageSync places objects only in its own namespace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles } from '../test/support/git/index.ts';
import { kube, uniqueName } from './support/cluster.ts';
import {
  createPackageSync,
  packageSync,
  waitCondition,
  waitReady,
  type ControllerHandle,
} from './support/controller.ts';
import { startGitEnv, type GitEnv } from './support/git-env.ts';
import { cmPath, configMap, get, inventoryIds, ready, trigger } from './support/safety.ts';

let controller: ControllerHandle;
let defaulted: ControllerHandle;
let confined: ControllerHandle;
let platform: string;
let fx: GitEnv;

beforeAll(async () => {
  fx = await startGitEnv(false);
  platform = await fx.namespace('platform');
  controller = await fx.startController();
  defaulted = await fx.startController({ args: ['--default-service-account', 'deployer'] });
  confined = await fx.startController({ allowCrossNamespace: false, args: ['--controller-namespace', platform] });
});

afterAll(async () => {
  await fx?.dispose();
  const client = await kube();
  await client.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${clusterRole}`).catch(() => 0);
});

const clusterRole = uniqueName('psync-e2e-never');
const secret = (name: string) => `apiVersion: v1\nkind: Secret\nmetadata: {name: ${name}}\nstringData: {k: v}\n`;

/** A ServiceAccount `name` in `ns` bound to a Role with these rules. */
async function serviceAccount(ns: string, name: string, rules: { resources: string[]; verbs: string[] }[]) {
  const client = await kube();
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
  await client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { metadata: { name } } });
  await client.request('POST', `${rbac}/roles`, {
    body: { metadata: { name }, rules: rules.map((r) => ({ apiGroups: [''], ...r })) },
  });
  await client.request('POST', `${rbac}/rolebindings`, {
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    },
  });
}

async function grant(ns: string, name: string, rules: { resources: string[]; verbs: string[] }[]) {
  await (
    await kube()
  ).request('PUT', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles/${name}`, {
    body: { metadata: { name }, rules: rules.map((r) => ({ apiGroups: [''], ...r })) },
  });
}

const readWrite = ['get', 'list', 'watch', 'create', 'patch', 'update'];

describe('serviceAccountName', () => {
  it('acts as the ServiceAccount: RBAC refusals are reported with verb and resource, never bypassed', async () => {
    const ns = await fx.namespace('tenant');
    await serviceAccount(ns, 'deployer', [{ resources: ['configmaps'], verbs: readWrite }]);
    const { repo, url } = await fx.repo('tenant', { 'a.yaml': configMap('a', { k: 'v' }), 's.yaml': secret('s') });
    const spec = { source: { url }, serviceAccountName: 'deployer', interval: '1h', retryInterval: '1s' };
    await createPackageSync(packageSync(ns, 'app', controller.shard, spec));

    // it may not even read Secrets: nothing is applied (the controller itself could). A new package is read
    // with one GET per object (engine/live.ts), so the refusal names get.
    const unread = await waitCondition(ns, 'app', 'Ready', 'False', 'Forbidden');
    expect(ready(unread)?.message).toContain(
      `User "system:serviceaccount:${ns}:deployer" cannot get resource "secrets"`,
    );
    expect(await get(cmPath(ns, 'a'))).toBeUndefined();

    // it may read Secrets but not write them: the refusal names the verb
    await grant(ns, 'deployer', [
      { resources: ['configmaps'], verbs: readWrite },
      { resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
    ]);
    await trigger(ns, 'app');
    const unwritten = await waitCondition(ns, 'app', 'Ready', 'False', 'Forbidden', 30_000).then(async (ps) =>
      ready(ps)?.message.includes('cannot patch') ? ps : waitPatchRefused(ns),
    );
    expect(ready(unwritten)?.message).toContain(`apply Secret/${ns}/s:`);
    expect(ready(unwritten)?.message).toContain('cannot patch resource "secrets"');
    expect(await get(`/api/v1/namespaces/${ns}/secrets/s`)).toBeUndefined();

    // without the Secret it applies; dropping `a` then needs a delete it may not do → PruneFailed, kept
    await commitFiles(repo, 'main', { 's.yaml': null }, 'no secret');
    await trigger(ns, 'app');
    await waitReady(ns, 'app', (ps) => inventoryIds(ps).length === 1);
    await commitFiles(repo, 'main', { 'a.yaml': null, 'b.yaml': configMap('b', { k: 'v' }) }, 'b instead of a');
    await trigger(ns, 'app');
    const unpruned = await waitCondition(ns, 'app', 'Ready', 'False', 'PruneFailed');
    expect(ready(unpruned)?.message).toContain(`ConfigMap/${ns}/a:`);
    expect(ready(unpruned)?.message).toContain('cannot delete resource "configmaps"');
    expect(inventoryIds(unpruned)).toEqual([`${ns}_a__ConfigMap`, `${ns}_b__ConfigMap`]);
    expect(await get(cmPath(ns, 'a'))).toBeDefined();
  });

  it('a ServiceAccount that does not exist has no rights: Forbidden, nothing applied', async () => {
    const ns = await fx.namespace('tenant-ghost');
    const { url } = await fx.repo('tenant-ghost', { 'a.yaml': configMap('a', { k: 'v' }) });
    await createPackageSync(packageSync(ns, 'app', controller.shard, { source: { url }, serviceAccountName: 'ghost' }));
    const ps = await waitCondition(ns, 'app', 'Ready', 'False', 'Forbidden');
    expect(ready(ps)?.message).toContain(`system:serviceaccount:${ns}:ghost`);
    expect(await get(cmPath(ns, 'a'))).toBeUndefined();
  });
});

describe('--default-service-account', () => {
  it('impersonates it for PackageSyncs that name none, and never falls back to the controller', async () => {
    const bare = await fx.namespace('tenant-bare');
    const equipped = await fx.namespace('tenant-equipped');
    await serviceAccount(equipped, 'deployer', [{ resources: ['configmaps'], verbs: readWrite }]);
    const { url } = await fx.repo('tenant-default', { 'a.yaml': configMap('a', { k: 'v' }) });
    await createPackageSync(packageSync(bare, 'app', defaulted.shard, { source: { url } }));
    await createPackageSync(packageSync(equipped, 'app', defaulted.shard, { source: { url } }));
    const refused = await waitCondition(bare, 'app', 'Ready', 'False', 'Forbidden');
    expect(ready(refused)?.message).toContain(`system:serviceaccount:${bare}:deployer`);
    expect(await get(cmPath(bare, 'a'))).toBeUndefined();
    await waitReady(equipped, 'app');
    expect(await get(cmPath(equipped, 'a'))).toBeDefined();
  });
});

describe('namespace policy without --allow-cross-namespace-objects', () => {
  it("keeps a tenant's objects in its namespace; the controller's namespace may place them anywhere", async () => {
    const tenant = await fx.namespace('tenant-np');
    const other = await fx.namespace('tenant-np-other');
    const own = await fx.repo('np-own', { 'a.yaml': configMap('a', { k: 'v' }) });
    const explicit = await fx.repo('np-explicit', {
      'a.yaml': configMap('a', { k: 'v' }),
      'b.yaml': configMap('b', { k: 'v' }).replace('  name: b\n', `  name: b\n  namespace: ${other}\n`),
    });
    const cluster = await fx.repo('np-cluster', {
      'r.yaml': `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: ${clusterRole}}\nrules: []\n`,
    });
    const create = (ns: string, name: string, url: string, more: Record<string, unknown> = {}) =>
      createPackageSync(packageSync(ns, name, confined.shard, { source: { url }, ...more }));
    await create(tenant, 'own', own.url);
    await create(tenant, 'target', own.url, { targetNamespace: other });
    await create(tenant, 'explicit', explicit.url);
    await create(tenant, 'cluster', cluster.url);
    await create(platform, 'platform', own.url, { targetNamespace: other });

    await waitReady(tenant, 'own');
    const target = await waitCondition(tenant, 'target', 'Ready', 'False', 'NamespaceNotAllowed');
    expect(ready(target)?.message).toContain(
      `ConfigMap/${other}/a is in namespace ${other}, outside this PackageSync's namespace ${tenant}`,
    );
    expect(target.status?.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('True');
    const explicitNs = await waitCondition(tenant, 'explicit', 'Ready', 'False', 'NamespaceNotAllowed');
    expect(ready(explicitNs)?.message).toContain(`ConfigMap/${other}/b`);
    expect(await get(cmPath(tenant, 'a'))).toBeDefined(); // from 'own' only: 'explicit' applied nothing
    expect((await get(cmPath(tenant, 'a')))?.metadata.labels?.['packagesync.io/name']).toBe('own');
    const clusterScoped = await waitCondition(tenant, 'cluster', 'Ready', 'False', 'NamespaceNotAllowed');
    expect(ready(clusterScoped)?.message).toContain(`ClusterRole/${clusterRole} is in cluster scope`);
    expect(await get(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${clusterRole}`)).toBeUndefined();

    await waitReady(platform, 'platform');
    expect((await get(cmPath(other, 'a')))?.metadata.labels?.['packagesync.io/name']).toBe('platform');
  });
});

/** The first Forbidden after the grant may still be the list one (RBAC caches briefly): wait for patch. */
async function waitPatchRefused(ns: string) {
  for (let i = 0; i < 40; i++) {
    await trigger(ns, 'app');
    const ps = await waitCondition(ns, 'app', 'Ready', 'False', 'Forbidden');
    if (ready(ps)?.message.includes('cannot patch')) return ps;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('never refused the patch');
}
