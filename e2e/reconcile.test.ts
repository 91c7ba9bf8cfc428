/**
 * The main path, end to end: a real controller process, a real git server, the real control plane.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, tag } from '../test/support/git/index.ts';
import { FIELD_MANAGER } from '../src/api/packagesync.ts';
import { eventReasons, eventually, get, kube, type Live } from './support/cluster.ts';
import { getPackageSync, patchPackageSync, waitCondition, waitReady } from './support/controller.ts';
import { configMap, deployment, startGitEnv, type GitEnvWithController } from './support/git-env.ts';

let env: GitEnvWithController;

beforeAll(async () => {
  env = await startGitEnv();
});

afterAll(async () => {
  await env?.dispose();
});

describe('a PackageSync on a branch', () => {
  it('applies the package, then a changed object, then prunes a removed one', async () => {
    const ns = await env.namespace('e2e-main');
    const { repo, url, sha } = await env.repo('main-path', {
      'app/cm.yaml': configMap('settings', { color: 'blue' }),
      'app/deploy.yaml': deployment('web', 2),
      'app/extra.yaml': configMap('extra', { a: '1' }),
      'README.md': 'not a manifest',
    });
    const ready = await env.syncReady(ns, 'app', {
      source: { url, ref: { branch: 'main' }, path: 'app' },
      timeout: '1m',
    });
    expect(ready.status?.lastAppliedRevision).toBe(`main@sha1:${sha}`);
    expect(ready.status?.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(
      /^Applied revision main@sha1:[0-9a-f]{40}: 3 created$/,
    );
    expect(ready.status?.inventory?.entries.map((e) => e.id).sort()).toEqual([
      `${ns}_extra__ConfigMap`,
      `${ns}_settings__ConfigMap`,
      `${ns}_web_apps_Deployment`,
    ]);
    const cm = await get(`/api/v1/namespaces/${ns}/configmaps/settings`);
    expect(cm?.metadata.labels).toMatchObject({ 'packagesync.io/name': 'app', 'packagesync.io/namespace': ns });
    const web = await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
    expect((web?.status as { availableReplicas?: number }).availableReplicas).toBe(2);

    const sha2 = await commitFiles(
      repo,
      'main',
      { 'app/cm.yaml': configMap('settings', { color: 'green' }), 'app/extra.yaml': null },
      'change',
    );
    await patchPackageSync(ns, 'app', {
      metadata: { annotations: { 'packagesync.io/reconcile-requested-at': 'now-1' } },
    });
    // answered by the requested run; a check already under way when the commit landed (the drift watch queues one
    // when kube-controller-manager touches the Deployment) may have applied the change first, and the requested
    // run then found nothing left to do: the history says which run changed what
    const after = await waitReady(
      ns,
      'app',
      (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha2}` && ps.status?.lastHandledReconcileAt === 'now-1',
    );
    const changed = after.status?.history?.find((h) => h.revision === `main@sha1:${sha2}` && (h.configured ?? 0) > 0);
    expect(changed).toMatchObject({ result: 'Succeeded', configured: 1, pruned: 1 });
    expect(
      ((await get(`/api/v1/namespaces/${ns}/configmaps/settings`)) as { data?: Record<string, string> }).data?.color,
    ).toBe('green');
    await eventually(
      'extra pruned',
      async () => (await get(`/api/v1/namespaces/${ns}/configmaps/extra`)) === undefined,
    );
    expect(after.status?.inventory?.entries).toHaveLength(2);
    expect(after.status?.history?.[0]).toMatchObject({ revision: `main@sha1:${sha2}`, result: 'Succeeded' });

    const events = await eventReasons(ns, 'app');
    expect(events).toContain('Applied');
  });

  it('does not write anything when restarted with nothing changed', async () => {
    const ns = await env.namespace('e2e-restart');
    const { url } = await env.repo('restart', {
      'cm.yaml': configMap('one', { k: 'v' }),
      'deploy.yaml': deployment('api'),
    });
    const ready = await env.syncReady(ns, 'r', { source: { url } });
    const cmBefore = await get(`/api/v1/namespaces/${ns}/configmaps/one`);
    const deployBefore = await get(`/apis/apps/v1/namespaces/${ns}/deployments/api`);
    await env.controller.restart();
    // the restarted controller reconciles everything once: wait for that to have happened
    await new Promise((r) => setTimeout(r, 4000));
    const psAfter = await getPackageSync(ns, 'r');
    // If this fails, the message shows what the restarted controller wrote (e.g. an InternalError under load)
    // next to the Deployment before and after and its Pods' conditions.
    const pods = await (await kube()).request<{ items: Live[] }>('GET', `/api/v1/namespaces/${ns}/pods`);
    const diag = JSON.stringify({
      written: psAfter?.status?.conditions,
      readyWas: ready.status?.conditions,
      deployBefore: deployBefore?.status,
      deployAfter: (await get(`/apis/apps/v1/namespaces/${ns}/deployments/api`))?.status,
      pods: pods.items.map((p) => ({ name: p.metadata.name, status: p.status })),
    });
    expect(psAfter?.metadata.resourceVersion, diag).toBe(ready.metadata.resourceVersion);
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/one`))?.metadata.resourceVersion).toBe(
      cmBefore?.metadata.resourceVersion,
    );
    // The Deployment's resourceVersion moves with the deployment controller's status updates; what must
    // not move is its spec (generation) and our field manager's entry (its time changes with every apply).
    const ours = (o: Awaited<ReturnType<typeof get>>) =>
      JSON.stringify({
        generation: o?.metadata.generation,
        managed: ((o?.metadata.managedFields ?? []) as { manager?: string }[]).filter(
          (f) => f.manager === FIELD_MANAGER,
        ),
      });
    expect(ours(await get(`/apis/apps/v1/namespaces/${ns}/deployments/api`))).toBe(ours(deployBefore));
  });
});

describe('adoption', () => {
  it('adopts an object that exists without any PackageSync labels', async () => {
    const ns = await env.namespace('e2e-adopt');
    const client = await kube();
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'legacy', labels: { team: 'a' } },
        data: { k: 'old' },
      },
    });
    const { url } = await env.repo('adopt', { 'cm.yaml': configMap('legacy', { k: 'new' }) });
    await env.syncReady(ns, 'adopt', { source: { url } });
    const cm = await get(`/api/v1/namespaces/${ns}/configmaps/legacy`);
    expect(cm?.data?.k).toBe('new');
    expect(cm?.metadata.labels).toMatchObject({
      team: 'a',
      'packagesync.io/name': 'adopt',
      'packagesync.io/namespace': ns,
    });
  });
});

describe('refs', () => {
  it('follows a tag, a semver range and a pinned commit', async () => {
    const ns = await env.namespace('e2e-refs');
    const { repo, url, sha: first } = await env.repo('refs', { 'cm.yaml': configMap('rev', { v: '1.0.0' }) });
    await tag(repo, 'v1.0.0', first);
    const second = await commitFiles(repo, 'main', { 'cm.yaml': configMap('rev', { v: '1.2.0' }) }, 'v1.2.0');
    await tag(repo, 'v1.2.0', second, { annotated: true });
    const third = await commitFiles(repo, 'main', { 'cm.yaml': configMap('rev', { v: '2.0.0' }) }, 'v2');
    await tag(repo, 'v2.0.0', third);

    await (await kube()).request('POST', '/api/v1/namespaces', { body: { metadata: { name: `${ns}-semver` } } });
    await (await kube()).request('POST', '/api/v1/namespaces', { body: { metadata: { name: `${ns}-commit` } } });
    env.adoptNamespace(`${ns}-semver`, `${ns}-commit`);
    await env.sync(ns, 'by-tag', { source: { url, ref: { tag: 'v1.0.0' } }, targetNamespace: ns });
    await env.sync(ns, 'by-semver', {
      source: { url, ref: { semver: '^1.0.0' } },
      targetNamespace: `${ns}-semver`,
    });
    await env.sync(ns, 'by-commit', {
      source: { url, ref: { commit: second } },
      targetNamespace: `${ns}-commit`,
    });

    expect((await waitReady(ns, 'by-tag')).status?.lastAppliedRevision).toBe(`v1.0.0@sha1:${first}`);
    expect((await waitReady(ns, 'by-semver')).status?.lastAppliedRevision).toBe(`v1.2.0@sha1:${second}`);
    expect((await waitReady(ns, 'by-commit')).status?.lastAppliedRevision).toBe(`sha1:${second}`);
  });
});

describe('packages', () => {
  it('applies a CRD and an instance of it in one package', async () => {
    const ns = await env.namespace('e2e-crd');
    const group = `${ns}.example.com`;
    const crd = [
      'apiVersion: apiextensions.k8s.io/v1',
      'kind: CustomResourceDefinition',
      `metadata: {name: widgets.${group}}`,
      'spec:',
      `  group: ${group}`,
      '  names: {kind: Widget, plural: widgets, singular: widget}',
      '  scope: Namespaced',
      '  versions:',
      '    - name: v1',
      '      served: true',
      '      storage: true',
      '      schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}',
      '',
    ].join('\n');
    const widget = `apiVersion: ${group}/v1\nkind: Widget\nmetadata: {name: gizmo}\nspec: {size: 3}\n`;
    const { url } = await env.repo('crd', { 'a-widget.yaml': widget, 'z-crd.yaml': crd });
    await env.syncReady(ns, 'crd', { source: { url } });
    expect(await get(`/apis/${group}/v1/namespaces/${ns}/widgets/gizmo`)).toBeDefined();
    // cluster-scoped CRD: clean it up with the PackageSync (delete prunes)
    await (await kube()).request('DELETE', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs/crd`);
    await eventually(
      'CRD pruned on delete',
      async () => (await get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`)) === undefined,
    );
  });

  it('keeps objects with prune: false, and on delete without prune', async () => {
    const ns = await env.namespace('e2e-noprune');
    const { repo, url } = await env.repo('noprune', {
      'a.yaml': configMap('a', { k: 'v' }),
      'b.yaml': configMap('b', { k: 'v' }),
    });
    await env.syncReady(ns, 'np', { source: { url }, prune: false });
    const sha = await commitFiles(repo, 'main', { 'b.yaml': null }, 'drop b');
    await patchPackageSync(ns, 'np', { metadata: { annotations: { 'packagesync.io/reconcile-requested-at': '1' } } });
    const after = await waitReady(ns, 'np', (ps) => ps.status?.lastAppliedRevision?.endsWith(sha) === true);
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/b`)).toBeDefined();
    // left in the cluster and released from the inventory, as Flux does
    expect(after.status?.inventory?.entries.map((e) => e.id)).toEqual([`${ns}_a__ConfigMap`]);
    await (await kube()).request('DELETE', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs/np`);
    await eventually('PackageSync gone', async () => (await getPackageSync(ns, 'np')) === undefined);
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/a`)).toBeDefined();
  });

  it('prunes everything on delete with prune: true', async () => {
    const ns = await env.namespace('e2e-delprune');
    const { url } = await env.repo('delprune', { 'a.yaml': configMap('a', { k: 'v' }) });
    await env.syncReady(ns, 'dp', { source: { url } });
    await (await kube()).request('DELETE', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs/dp`);
    await eventually('PackageSync gone', async () => (await getPackageSync(ns, 'dp')) === undefined);
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/a`)).toBeUndefined();
  });

  it('puts namespaced objects in targetNamespace', async () => {
    const ns = await env.namespace('e2e-target');
    const target = await env.namespace('e2e-target-dst');
    const { url } = await env.repo('target', { 'a.yaml': configMap('a', { k: 'v' }) });
    await env.syncReady(ns, 't', { source: { url }, targetNamespace: target });
    expect(await get(`/api/v1/namespaces/${target}/configmaps/a`)).toBeDefined();
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/a`)).toBeUndefined();
  });
});

describe('suspend and trigger', () => {
  it('stops all work while suspended and reconciles at once on the trigger annotation', async () => {
    const ns = await env.namespace('e2e-suspend');
    const { repo, url } = await env.repo('suspend', { 'a.yaml': configMap('a', { v: '1' }) });
    await env.syncReady(ns, 's', { source: { url }, interval: '1h' });
    await patchPackageSync(ns, 's', { spec: { suspend: true } });
    const sha = await commitFiles(repo, 'main', { 'a.yaml': configMap('a', { v: '2' }) }, 'v2');
    await patchPackageSync(ns, 's', {
      metadata: { annotations: { 'packagesync.io/reconcile-requested-at': 'while-suspended' } },
    });
    await new Promise((r) => setTimeout(r, 3000));
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/a`))?.data?.v).toBe('1');
    await patchPackageSync(ns, 's', { spec: { suspend: false } });
    await waitReady(ns, 's', (ps) => ps.status?.lastAppliedRevision?.endsWith(sha) === true);
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/a`))?.data?.v).toBe('2');
  });
});

describe('failures', () => {
  it('reports a render failure naming the file, applying nothing and keeping the inventory', async () => {
    const ns = await env.namespace('e2e-fail');
    const { repo, url, sha } = await env.repo('fail', { 'a.yaml': configMap('a', { v: '1' }) });
    await env.syncReady(ns, 'f', { source: { url }, retryInterval: '2s' });
    await commitFiles(
      repo,
      'main',
      { 'a.yaml': configMap('a', { v: '2' }), 'broken.yaml': 'kind: [unclosed\n' },
      'broken',
    );
    await patchPackageSync(ns, 'f', { metadata: { annotations: { 'packagesync.io/reconcile-requested-at': 'x' } } });
    const failed = await waitCondition(ns, 'f', 'Ready', 'False', 'RenderFailed');
    expect(failed.status?.conditions?.find((c) => c.type === 'Ready')?.message).toContain('broken.yaml');
    expect(failed.status?.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('True');
    expect(failed.status?.lastAppliedRevision).toBe(`main@sha1:${sha}`);
    expect(failed.status?.inventory?.entries).toHaveLength(1);
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/a`))?.data?.v).toBe('1');
  });
});
