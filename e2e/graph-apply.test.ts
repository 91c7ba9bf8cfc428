/**
 * Apply and teardown over the dependency graph, through the real controller on the real control plane
 * (docs/ordering.md): one bad object holds back only its dependents; a depends-on dependent is created
 * only once its dependency is Current; teardown deletes custom resources before their CRD and objects
 * before their Namespace, waiting for their finalizers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageSync } from '../src/api/packagesync.ts';
import { commitFiles } from '../test/support/git/index.ts';
import { eventually, kube } from './support/cluster.ts';
import {
  createPackageSync,
  getPackageSync,
  packageSync,
  waitCondition,
  waitReady,
  type ControllerHandle,
} from './support/controller.ts';
import { packageDir, packagesync } from './support/cli.ts';
import { cmPath, configMap, deployment, get, inventoryIds, ready, trigger } from './support/safety.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';

let controller: ControllerHandle;
let fx: GitEnvWithController;

beforeAll(async () => {
  fx = await startGitEnv();
  controller = fx.controller;
});

afterAll(async () => {
  await fx?.dispose();
});

const dependsOn = (ref: string) => `  annotations: {config.kubernetes.io/depends-on: "${ref}"}\n`;

function crd(group: string, kind = 'Widget'): string {
  const plural = `${kind.toLowerCase()}s`;
  return [
    'apiVersion: apiextensions.k8s.io/v1',
    'kind: CustomResourceDefinition',
    `metadata: {name: ${plural}.${group}}`,
    'spec:',
    `  group: ${group}`,
    `  names: {kind: ${kind}, plural: ${plural}, singular: ${kind.toLowerCase()}}`,
    '  scope: Namespaced',
    '  versions:',
    '    - name: v1',
    '      served: true',
    '      storage: true',
    '      schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}',
    '',
  ].join('\n');
}

const OPERATOR_FINALIZER = 'e2e.packagesync.io/operator';

function widget(group: string, name: string, finalizer = false): string {
  const meta = finalizer ? `{name: ${name}, finalizers: [${OPERATOR_FINALIZER}]}` : `{name: ${name}}`;
  return `apiVersion: ${group}/v1\nkind: Widget\nmetadata: ${meta}\nspec: {size: 1}\n`;
}

const failuresOf = (ps: PackageSync | undefined) => ps?.status?.failures ?? [];

async function releaseFinalizers(path: string): Promise<void> {
  await (
    await kube()
  ).request('PATCH', path, {
    contentType: 'application/merge-patch+json',
    body: { metadata: { finalizers: null } },
  });
}

async function deletePackageSync(ns: string, name: string): Promise<void> {
  await (await kube()).request('DELETE', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs/${name}`);
}

describe('best-effort apply over the graph', () => {
  it('one invalid object among many: the rest applied, its dependent skipped, Ready names it, nothing pruned', async () => {
    const ns = await fx.namespace('graph-partial');
    const { repo, url, sha } = await fx.repo('graph-partial', {
      'app/old.yaml': configMap('old', { v: '1' }),
      'app/c0.yaml': configMap('c0', { v: '1' }),
    });
    await createPackageSync(
      packageSync(ns, 'ps', controller.shard, { source: { url, path: 'app' }, retryInterval: '1s', timeout: '1m' }),
    );
    await waitReady(ns, 'ps');

    // an invalid container name: the API server rejects the Deployment
    // comments first, so the object starts on line 3 of its file
    const bad = `# the web tier\n# owned by team a\n${deployment('bad').replace('name: app', 'name: Not_A_Valid_Name')}`;
    const files: Record<string, string | null> = { 'app/old.yaml': null, 'app/bad.yaml': bad };
    for (let i = 0; i < 12; i++) files[`app/c${i}.yaml`] = configMap(`c${i}`, { v: '2' });
    files['app/needs-bad.yaml'] = configMap('needs-bad', { v: '1' }, dependsOn(`apps/namespaces/${ns}/Deployment/bad`));
    await commitFiles(repo, 'main', files, 'one bad object');
    await trigger(ns, 'ps');

    const failed = await waitCondition(ns, 'ps', 'Ready', 'False', 'ApplyFailed');
    // Ready: the bad object, from its file and line, with the count of what else went wrong
    expect(ready(failed)?.message).toContain(`Deployment/${ns}/bad`);
    expect(ready(failed)?.message).toContain('(from bad.yaml:3)');
    expect(ready(failed)?.message).toContain('1 skipped because a dependency failed');
    expect(failuresOf(failed)).toEqual([
      expect.objectContaining({
        object: `Deployment/${ns}/bad`,
        reason: 'ApplyFailed',
        message: expect.stringContaining('(from bad.yaml:3)'),
      }),
      {
        object: `ConfigMap/${ns}/needs-bad`,
        reason: 'DependencyFailed',
        message: `ConfigMap/${ns}/needs-bad (needs-bad.yaml:1) skipped: it depends on Deployment/${ns}/bad, which failed`,
      },
    ]);
    // the independent objects were applied, the dependent was not
    for (let i = 0; i < 12; i++) expect((await get(cmPath(ns, `c${i}`)))?.data?.v).toBe('2');
    expect(await get(cmPath(ns, 'needs-bad'))).toBeUndefined();
    // crash-safe inventory: old ∪ new, and nothing pruned (old left the package but is still there)
    expect(inventoryIds(failed)).toEqual(
      [
        `${ns}_bad_apps_Deployment`,
        ...Array.from({ length: 12 }, (_, i) => `${ns}_c${i}__ConfigMap`),
        `${ns}_needs-bad__ConfigMap`,
        `${ns}_old__ConfigMap`,
      ].sort(),
    );
    expect(await get(cmPath(ns, 'old'))).toBeDefined();
    expect(failed.status?.lastAppliedRevision).toBe(`main@sha1:${sha}`);
    // the history of the failed attempt records what it did, not zeros
    const attempt = failed.status?.history?.[0];
    expect(attempt?.result).toBe('ApplyFailed');
    expect(attempt?.configured).toBe(1);
    expect(attempt?.created).toBe(11);
    expect(attempt?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);

    // fixed: the dependent is applied, old is pruned, the failures are gone
    const fixed = await commitFiles(
      repo,
      'main',
      {
        'app/bad.yaml': deployment('good'),
        'app/needs-bad.yaml': configMap('needs-bad', { v: '1' }, dependsOn(`apps/namespaces/${ns}/Deployment/good`)),
      },
      'fixed',
    );
    await trigger(ns, 'ps');
    const done = await waitReady(ns, 'ps', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${fixed}`, 90_000);
    expect(done.status?.failures).toBeUndefined();
    expect(await get(cmPath(ns, 'needs-bad'))).toBeDefined();
    expect(await get(cmPath(ns, 'old'))).toBeUndefined();
  });

  it('a dependency cycle is refused before anything is applied, naming the objects and their files', async () => {
    const ns = await fx.namespace('graph-cycle');
    const { url } = await fx.repo('graph-cycle', {
      // not 'y': a plain y is the boolean true to kubectl (go-yaml's YAML 1.1), and so to us (ADR 0034)
      'x.yaml': configMap('x', { v: '1' }, dependsOn(`/namespaces/${ns}/ConfigMap/x2`)),
      'x2.yaml': configMap('x2', { v: '1' }, dependsOn(`/namespaces/${ns}/ConfigMap/x`)),
    });
    await createPackageSync(packageSync(ns, 'ps', controller.shard, { source: { url } }));
    const failed = await waitCondition(ns, 'ps', 'Ready', 'False', 'InvalidDependency');
    expect(ready(failed)?.message).toBe(
      `dependency cycle: ConfigMap/${ns}/x (x.yaml:1) → ConfigMap/${ns}/x2 (x2.yaml:1) → ConfigMap/${ns}/x (x.yaml:1); remove one of these dependencies`,
    );
    expect(await get(cmPath(ns, 'x'))).toBeUndefined();
  });
});

describe('packagesync apply takes the same path', () => {
  it('applies what it can, prints every failure and skip, prunes nothing, exits 1', async () => {
    const ns = await fx.namespace('graph-cli');
    const bad = deployment('bad').replace('name: app', 'name: Not_A_Valid_Name');
    const pkg = await packageDir({
      'a.yaml': configMap('a', { v: '1' }),
      'bad.yaml': bad,
      'needs-bad.yaml': configMap('needs-bad', { v: '1' }, dependsOn(`apps/namespaces/${ns}/Deployment/bad`)),
    });
    const r = await packagesync('apply', pkg.dir, '--name', 'cli', '-n', ns);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`ConfigMap/${ns}/a created`);
    expect(r.stdout).toContain('apply failed: nothing pruned');
    expect(r.stderr).toContain(`error: ApplyFailed: apply Deployment/${ns}/bad: `);
    expect(r.stderr).toMatch(/error: ApplyFailed: .*\(from bad\.yaml:1\)/);
    expect(r.stderr).toContain(
      `error: DependencyFailed: ConfigMap/${ns}/needs-bad (needs-bad.yaml:1) skipped: it depends on Deployment/${ns}/bad, which failed`,
    );
    expect(await get(cmPath(ns, 'a'))).toBeDefined();
    expect(await get(cmPath(ns, 'needs-bad'))).toBeUndefined();
    await pkg.dispose();
  });
});

describe('ordering: CRD, custom resources, depends-on', () => {
  it('custom resources after their CRD; a depends-on dependent only once its dependency is Current', async () => {
    const ns = await fx.namespace('graph-order');
    const group = `${ns}.example.com`;
    const { url } = await fx.repo('graph-order', {
      // file order puts the dependents first: only the graph can order them
      'a-widget.yaml': widget(group, 'gizmo'),
      'b-after-db.yaml': configMap('after-db', { v: '1' }, dependsOn(`apps/namespaces/${ns}/Deployment/db`)),
      'c-db.yaml': deployment('db', { replicas: 1 }),
      'z-crd.yaml': crd(group),
    });
    await createPackageSync(packageSync(ns, 'ps', controller.shard, { source: { url }, timeout: '2m' }));
    const done = await waitReady(ns, 'ps', undefined, 120_000);
    expect(inventoryIds(done)).toHaveLength(4);

    const created = (o: { metadata: Record<string, unknown> } | undefined) => String(o?.metadata.creationTimestamp);
    const theCrd = await get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`);
    const gizmo = await get(`/apis/${group}/v1/namespaces/${ns}/widgets/gizmo`);
    expect(created(gizmo) >= created(theCrd)).toBe(true);
    // The ConfigMap was created no earlier than the moment the Deployment became Available (Current)
    const db = (await get(`/apis/apps/v1/namespaces/${ns}/deployments/db`)) as
      { status?: { conditions?: { type: string; status: string; lastTransitionTime: string }[] } } | undefined;
    const available = db?.status?.conditions?.find((c) => c.type === 'Available' && c.status === 'True');
    expect(available).toBeDefined();
    const afterDb = await get(cmPath(ns, 'after-db'));
    expect(created(afterDb) >= available!.lastTransitionTime).toBe(true);
    // cleanup of the cluster-scoped CRD
    await deletePackageSync(ns, 'ps');
    await eventually(
      'CRD pruned',
      async () => (await get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`)) === undefined,
    );
  });

  it('a dependency that never becomes Current: its dependent is never created; the rest is', async () => {
    const ns = await fx.namespace('graph-never');
    const claim = [
      'apiVersion: v1',
      'kind: PersistentVolumeClaim',
      'metadata: {name: data}',
      'spec:',
      '  storageClassName: manual-e2e-graph',
      '  accessModes: [ReadWriteOnce]',
      '  resources: {requests: {storage: 1Gi}}',
      '',
    ].join('\n');
    const { url } = await fx.repo('graph-never', {
      'claim.yaml': claim,
      'needs-claim.yaml': configMap(
        'needs-claim',
        { v: '1' },
        dependsOn(`/namespaces/${ns}/PersistentVolumeClaim/data`),
      ),
      'other.yaml': configMap('other', { v: '1' }),
    });
    await createPackageSync(
      packageSync(ns, 'ps', controller.shard, { source: { url }, timeout: '6s', retryInterval: '1h' }),
    );
    const failed = await waitCondition(ns, 'ps', 'Ready', 'False', 'HealthCheckFailed');
    expect(ready(failed)?.message).toContain(`PersistentVolumeClaim/${ns}/data (claim.yaml:1) did not become Current`);
    expect(failuresOf(failed).map((f) => [f.object, f.reason])).toEqual([
      [`PersistentVolumeClaim/${ns}/data`, 'HealthCheckFailed'],
      [`ConfigMap/${ns}/needs-claim`, 'DependencyFailed'],
    ]);
    expect(await get(cmPath(ns, 'needs-claim'))).toBeUndefined();
    expect(await get(cmPath(ns, 'other'))).toBeDefined();
  });
});

describe('teardown in reverse graph order', () => {
  it('an operator-like package: its custom resources are deleted and gone before their CRD is deleted', async () => {
    const ns = await fx.namespace('graph-operator');
    const group = `${ns}.example.com`;
    const { url } = await fx.repo('graph-operator', {
      'crd.yaml': crd(group),
      'w1.yaml': widget(group, 'w1', true),
      'w2.yaml': widget(group, 'w2', true),
    });
    await createPackageSync(packageSync(ns, 'ps', controller.shard, { source: { url }, timeout: '2m' }));
    await waitReady(ns, 'ps');
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`;
    const widgetPath = (n: string) => `/apis/${group}/v1/namespaces/${ns}/widgets/${n}`;

    await deletePackageSync(ns, 'ps');
    // the resources are being deleted, held by the operator's finalizer; the CRD is left alone meanwhile
    await eventually('both widgets terminating', async () => {
      const ws = await Promise.all([get(widgetPath('w1')), get(widgetPath('w2'))]);
      return ws.every((w) => w?.metadata.deletionTimestamp !== undefined);
    });
    expect((await get(crdPath))?.metadata.deletionTimestamp).toBeUndefined();
    // the operator finishes one: the CRD still waits for the other
    await releaseFinalizers(widgetPath('w1'));
    await eventually('w1 gone', async () => (await get(widgetPath('w1'))) === undefined);
    expect((await get(crdPath))?.metadata.deletionTimestamp).toBeUndefined();
    await releaseFinalizers(widgetPath('w2'));
    // then the CRD goes, and the PackageSync with it
    await eventually('CRD deleted', async () => (await get(crdPath)) === undefined);
    await eventually('PackageSync finalized', async () => (await getPackageSync(ns, 'ps')) === undefined);
  });

  it('a Namespace that left the package is deleted only after the objects in it are gone', async () => {
    const ns = await fx.namespace('graph-ns');
    const inner = `${ns}-inner`;
    const held = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, namespace: ${inner}, finalizers: [${OPERATOR_FINALIZER}]}\ndata: {v: "1"}\n`;
    const { repo, url } = await fx.repo('graph-ns', {
      'keep.yaml': configMap('keep', { v: '1' }),
      'inner/ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${inner}}\n`,
      'inner/held.yaml': held,
      'inner/plain.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain, namespace: ${inner}}\ndata: {v: "1"}\n`,
    });
    // a Namespace is a protected kind: pruned only with the opt-in
    await createPackageSync(
      packageSync(ns, 'ps', controller.shard, {
        source: { url },
        timeout: '2m',
        retryInterval: '1s',
        pruneProtectedKinds: true,
      }),
    );
    await waitReady(ns, 'ps');

    await commitFiles(
      repo,
      'main',
      { 'inner/ns.yaml': null, 'inner/held.yaml': null, 'inner/plain.yaml': null },
      'drop inner',
    );
    await trigger(ns, 'ps');
    await eventually(
      'the held ConfigMap terminating',
      async () => (await get(cmPath(inner, 'held')))?.metadata.deletionTimestamp !== undefined,
    );
    await eventually('the plain ConfigMap gone', async () => (await get(cmPath(inner, 'plain'))) === undefined);
    // its Namespace waits for it
    const namespace = await get(`/api/v1/namespaces/${inner}`);
    expect(namespace?.metadata.deletionTimestamp).toBeUndefined();
    await releaseFinalizers(cmPath(inner, 'held'));
    await eventually('the Namespace deleted', async () => {
      const n = await get(`/api/v1/namespaces/${inner}`);
      return n === undefined || n.metadata.deletionTimestamp !== undefined;
    });
    const done = await waitReady(ns, 'ps', (ps) => inventoryIds(ps).length === 1);
    expect(inventoryIds(done)).toEqual([`${ns}_keep__ConfigMap`]);
  });
});
