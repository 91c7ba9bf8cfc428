/**
 * The deploy manifests' RBAC is enough, and is not cluster-admin. deploy/rbac.yaml and
 * deploy/serviceaccount.yaml are applied as renamed copies (a suffix on cluster-scoped names, the
 * ServiceAccount in a test namespace), a token is minted for that ServiceAccount with the TokenRequest
 * API, and the real controller runs with only that token — as it would in its pod — through the main
 * scenarios: create → Ready, change → applied, removal → pruned, delete → pruned, plus a tenant's own
 * ServiceAccount, leader election and events.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { KubeClient } from '../src/adapters/kube/client.ts';
import { eventReasons, eventually, get, kube, kubeconfig } from './support/cluster.ts';
import {
  createPackageSync,
  getPackageSync,
  packageSync,
  waitReady,
  type ControllerHandle,
} from './support/controller.ts';
import { applyDeployRbac, LEASE, SA, tokenKubeconfig, type DeployRbac } from './support/deploy-rbac.ts';
import { configMap, deployment, startGitEnv, type GitEnv } from './support/git-env.ts';

let env: GitEnv;
let systemNs: string;
let controller: ControllerHandle;
let asController: KubeClient;
let tmp: string;
let rbac: DeployRbac | undefined;

beforeAll(async () => {
  env = await startGitEnv(false);
  tmp = await mkdtemp(join(tmpdir(), 'psync-rbac-'));
  systemNs = await env.namespace('e2e-rbac-system');
  rbac = await applyDeployRbac(systemNs, tmp);
  const path = await tokenKubeconfig(systemNs, join(tmp, 'controller.kubeconfig'));
  asController = await KubeClient.create({ kubeconfig: path });
  controller = await env.startController({
    kubeconfig: path,
    args: [
      ...['--leader-elect', '--leader-election-namespace', systemNs, '--leader-election-id', LEASE],
      // every inventory past one object spills into shard ConfigMaps: the deploy RBAC must cover them (ADR 0027)
      ...['--inventory-spill-threshold', '1'],
    ],
  });
});

afterAll(async () => {
  await env?.dispose(); // the controller first
  await asController?.close();
  await rbac?.dispose();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function can(verb: string, resource: string, extra: Record<string, string> = {}): Promise<boolean> {
  const [res, subresource] = resource.split('/');
  const review = await asController.request<{ status: { allowed: boolean } }>(
    'POST',
    '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb, resource: res, subresource, ...extra } },
      },
    },
  );
  return review.status.allowed;
}

describe('the deploy RBAC', () => {
  it('is who the controller runs as, and is not cluster-admin', async () => {
    const me = await asController.request<{ status: { userInfo: { username: string } } }>(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
    );
    expect(me.status.userInfo.username).toBe(`system:serviceaccount:${systemNs}:${SA}`);

    const denied = await Promise.all([
      can('*', '*', { group: '*' }),
      can('escalate', 'clusterroles', { group: 'rbac.authorization.k8s.io' }),
      can('bind', 'clusterroles', { group: 'rbac.authorization.k8s.io' }),
      can('get', 'nodes/proxy'),
      can('create', 'nodes/proxy'),
      can('create', 'pods/exec', { namespace: 'kube-system' }),
      can('create', 'serviceaccounts/token', { namespace: 'kube-system' }),
      can('impersonate', 'users'),
      can('impersonate', 'groups'),
      can('delete', 'nodes'),
      can('create', 'certificatesigningrequests', { group: 'certificates.k8s.io' }),
      can('update', 'leases', { group: 'coordination.k8s.io', namespace: 'kube-system', name: 'kube-scheduler' }),
    ]);
    expect(denied).toEqual(denied.map(() => false));

    const allowed = await Promise.all([
      can('watch', 'packagesyncs', { group: 'packagesync.io' }),
      can('patch', 'packagesyncs/status', { group: 'packagesync.io', namespace: 'team-x' }),
      can('impersonate', 'serviceaccounts', { namespace: 'team-x' }),
      can('create', 'events', { namespace: 'team-x' }),
      can('get', 'secrets', { namespace: 'team-x', name: 'git-auth' }),
      can('update', 'leases', { group: 'coordination.k8s.io', namespace: systemNs, name: LEASE }),
      can('create', 'deployments', { group: 'apps', namespace: 'team-x' }),
    ]);
    expect(allowed).toEqual(allowed.map(() => true));
  });

  it('is enough for the main path: create → Ready, change → applied, removal → pruned, delete → pruned', async () => {
    const ns = await env.namespace('e2e-rbac-app');
    const { repo, url, sha } = await env.repo('rbac-main', {
      'cm.yaml': configMap('settings', { color: 'blue' }),
      'extra.yaml': configMap('extra', { a: '1' }),
      'deploy.yaml': deployment('web'),
    });
    await createPackageSync(packageSync(ns, 'app', controller.shard, { source: { url }, timeout: '1m' }));
    const ready = await waitReady(ns, 'app');
    expect(ready.status?.lastAppliedRevision).toBe(`main@sha1:${sha}`);
    expect(ready.metadata.finalizers).toContain('packagesync.io/finalizer');
    expect(ready.status?.objects?.current).toBe(3);

    const sha2 = await env.commit(repo, { 'cm.yaml': configMap('settings', { color: 'green' }), 'extra.yaml': null });
    await (
      await kube()
    ).request('PATCH', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs/app`, {
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'packagesync.io/reconcile-requested-at': 'rbac-1' } } },
    });
    await waitReady(ns, 'app', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha2}`);
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/settings`))?.data?.color).toBe('green');
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/extra`)).toBeUndefined();

    // events are best effort (a refused one is dropped silently): that they exist shows the grant works
    const reasons = await eventReasons(ns, 'app');
    expect(reasons).toContain('Applied');

    await (await kube()).request('DELETE', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs/app`);
    await eventually('PackageSync finalized', async () => (await getPackageSync(ns, 'app')) === undefined);
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/settings`)).toBeUndefined();
    expect(await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`)).toBeUndefined();

    // leader election ran on the Lease the Role names, as this ServiceAccount
    const lease = await get(`/apis/coordination.k8s.io/v1/namespaces/${systemNs}/leases/${LEASE}`);
    expect((lease as { spec?: { holderIdentity?: string } })?.spec?.holderIdentity).toBeTruthy();
    expect(controller.logs.filter((l) => /forbidden/i.test(l))).toEqual([]);
  });

  it("applies as a tenant's ServiceAccount when spec.serviceAccountName says so", async () => {
    const ns = await env.namespace('e2e-rbac-tenant');
    const admin = await kube();
    await admin.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: { metadata: { name: 'deployer' } },
    });
    await admin.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      body: {
        metadata: { name: 'deployer-edit' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
        subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }],
      },
    });
    const { url } = await env.repo('rbac-tenant', { 'cm.yaml': configMap('tenant', { k: 'v' }) });
    await createPackageSync(
      packageSync(ns, 'tenant', controller.shard, { source: { url }, serviceAccountName: 'deployer' }),
    );
    await waitReady(ns, 'tenant');
    const cm = await get(`/api/v1/namespaces/${ns}/configmaps/tenant`);
    const managers = (cm?.metadata.managedFields as { manager: string }[] | undefined)?.map((f) => f.manager);
    expect(managers).toContain('packagesync');
  });
});

describe('impersonation from a kubeconfig', () => {
  it("is honoured, and refuses a tenant's impersonation instead of silently dropping it", async () => {
    // A kubeconfig user with `as:` (what `kubectl --as` writes): the client turns it into Impersonate-User.
    const config = parse(await readFile(kubeconfig(), 'utf8')) as { users: { user: Record<string, unknown> }[] };
    for (const u of config.users) u.user.as = `system:serviceaccount:${systemNs}:${SA}`;
    const path = join(tmp, 'as.kubeconfig');
    await writeFile(path, stringify(config), { mode: 0o600 });
    const client = await KubeClient.create({ kubeconfig: path });
    try {
      const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
      const who = await client.request<{ status: { userInfo: { username: string } } }>(
        'POST',
        '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        { body },
      );
      expect(who.status.userInfo.username).toBe(`system:serviceaccount:${systemNs}:${SA}`);
      // Before the fix, this request ran as the kubeconfig's identity, not as the tenant's ServiceAccount.
      await expect(
        client.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
          body,
          impersonate: 'system:serviceaccount:team-x:deployer',
        }),
      ).rejects.toThrow(/impersonation does not chain/);
    } finally {
      await client.close();
    }
  });
});
