/**
 * Per-object policy annotations on the real API server (core/plan/object-policy.ts, docs/policy.md):
 * IfNotPresent is created once and never updated, Ignore is never touched (nor created, nor pruned), and an
 * immutable-field change deletes and re-creates an object only when it opted in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles } from '../test/support/git/index.ts';
import { kube } from './support/cluster.ts';
import { waitCondition, waitReady } from './support/controller.ts';
import { quickSpec, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, configMap, get, inventoryIds, ready, trigger } from './support/safety.ts';

let fx: GitEnvWithController;

beforeAll(async () => {
  fx = await startGitEnv();
});

afterAll(async () => {
  await fx?.dispose();
});

const annotated = (annotations: Record<string, string>) =>
  `  annotations:\n${Object.entries(annotations)
    .map(([k, v]) => `    ${k}: "${v}"`)
    .join('\n')}\n`;

/** What another manager (a person, a controller) does to an object: a merge patch under its own name. */
async function editAs(path: string, body: Record<string, unknown>): Promise<void> {
  await (
    await kube()
  ).request('PATCH', path, {
    contentType: 'application/merge-patch+json',
    query: { fieldManager: 'someone-else' },
    body,
  });
}

describe('packagesync.io/apply', () => {
  it('IfNotPresent: created once, then neither reverted after another manager changed it nor updated from git', async () => {
    const ns = await fx.namespace('pol-inp');
    const seed = (v: string) => configMap('seed', { v }, annotated({ 'packagesync.io/apply': 'IfNotPresent' }));
    const { repo, url } = await fx.repo('pol-inp', {
      'seed.yaml': seed('1'),
      'plain.yaml': configMap('plain', { v: '1' }),
    });
    const first = await fx.syncReady(ns, 'inp', quickSpec(url));
    const created = await get(cmPath(ns, 'seed'));
    expect(created?.data).toEqual({ v: '1' });
    expect(inventoryIds(first)).toEqual([`${ns}_plain__ConfigMap`, `${ns}_seed__ConfigMap`]);

    await editAs(cmPath(ns, 'seed'), { data: { v: 'rotated-by-someone-else' } });
    const sha = await commitFiles(
      repo,
      'main',
      { 'seed.yaml': seed('2'), 'plain.yaml': configMap('plain', { v: '2' }) },
      'v2',
    );
    await trigger(ns, 'inp');
    await waitReady(ns, 'inp', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    expect((await get(cmPath(ns, 'plain')))?.data).toEqual({ v: '2' });
    const after = await get(cmPath(ns, 'seed'));
    expect(after?.data).toEqual({ v: 'rotated-by-someone-else' });
    expect(after?.metadata.uid).toBe(created?.metadata.uid);
  });

  it('Ignore (ours and Flux’s): never created, never changed, never pruned, not in health or the inventory', async () => {
    const ns = await fx.namespace('pol-ign');
    const ignored = configMap('hands-off', { v: 'git' }, annotated({ 'packagesync.io/apply': 'Ignore' }));
    const fluxIgnored = configMap('flux-off', { v: 'git' }, annotated({ 'kustomize.toolkit.fluxcd.io/ssa': 'Ignore' }));
    const { repo, url } = await fx.repo('pol-ign', {
      'hands-off.yaml': ignored,
      'flux-off.yaml': fluxIgnored,
      'plain.yaml': configMap('plain', { v: '1' }),
    });
    const first = await fx.syncReady(ns, 'ign', quickSpec(url));
    expect(await get(cmPath(ns, 'hands-off'))).toBeUndefined(); // not created, and Ready without it
    expect(await get(cmPath(ns, 'flux-off'))).toBeUndefined();
    expect(inventoryIds(first)).toEqual([`${ns}_plain__ConfigMap`]);

    // someone else creates it; the next revision leaves it exactly as it is
    await (
      await kube()
    ).request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'hands-off' }, data: { v: 'theirs' } },
    });
    const theirs = await get(cmPath(ns, 'hands-off'));
    const sha = await commitFiles(repo, 'main', { 'plain.yaml': configMap('plain', { v: '2' }) }, 'v2');
    await trigger(ns, 'ign');
    await waitReady(ns, 'ign', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    expect((await get(cmPath(ns, 'hands-off')))?.metadata.resourceVersion).toBe(theirs?.metadata.resourceVersion);

    // a managed object a person marks Ignore on the cluster is left alone when it leaves the package
    await editAs(cmPath(ns, 'plain'), { metadata: { annotations: { 'packagesync.io/apply': 'Ignore' } } });
    const sha3 = await commitFiles(repo, 'main', { 'plain.yaml': null, 'hands-off.yaml': null }, 'drop them');
    await trigger(ns, 'ign');
    const done = await waitReady(ns, 'ign', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha3}`);
    expect((await get(cmPath(ns, 'plain')))?.data).toEqual({ v: '2' });
    expect((await get(cmPath(ns, 'hands-off')))?.data).toEqual({ v: 'theirs' });
    expect(inventoryIds(done)).toEqual([]);
  });

  it('an unknown value stops the revision with a condition naming the object, the file and the values', async () => {
    const ns = await fx.namespace('pol-bad');
    const { url } = await fx.repo('pol-bad', {
      'typo.yaml': configMap('typo', { v: '1' }, annotated({ 'packagesync.io/apply': 'IfAbsent' })),
      'plain.yaml': configMap('plain', { v: '1' }),
    });
    await fx.sync(ns, 'bad', quickSpec(url));
    const failed = await waitCondition(ns, 'bad', 'Ready', 'False', 'InvalidManifest');
    expect(ready(failed)?.message).toContain(`ConfigMap/${ns}/typo (typo.yaml:1)`);
    expect(ready(failed)?.message).toContain('"IfAbsent" is not one of Merge, IfNotPresent, Ignore');
    expect(await get(cmPath(ns, 'plain'))).toBeUndefined(); // nothing applied
  });
});

describe('packagesync.io/recreate', () => {
  const job = (image: string, annotations: Record<string, string> = {}) =>
    `apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: once\n${Object.keys(annotations).length ? annotated(annotations) : ''}` +
    `spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: "${image}"}]\n`;

  it('a Job whose template changed: refused, naming object, file, field and the opt-in; re-created with it', async () => {
    const ns = await fx.namespace('pol-job');
    const { repo, url } = await fx.repo('pol-job', { 'job.yaml': job('registry.local/once:1') });
    await fx.syncReady(ns, 'job', quickSpec(url, { wait: false }));
    const path = `/apis/batch/v1/namespaces/${ns}/jobs/once`;
    const before = await get(path);

    await commitFiles(repo, 'main', { 'job.yaml': job('registry.local/once:2') }, 'v2');
    await trigger(ns, 'job');
    const failed = await waitCondition(ns, 'job', 'Ready', 'False', 'ImmutableFieldChange');
    const message = ready(failed)?.message ?? '';
    expect(message).toContain(`Job/${ns}/once: spec.template cannot be changed`);
    expect(message).toContain('job.yaml');
    expect(message).toContain('annotate it packagesync.io/recreate: enabled');
    expect((await get(path))?.metadata.uid).toBe(before?.metadata.uid);

    const sha = await commitFiles(
      repo,
      'main',
      { 'job.yaml': job('registry.local/once:2', { 'packagesync.io/recreate': 'enabled' }) },
      'opt in',
    );
    await trigger(ns, 'job');
    await waitReady(ns, 'job', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    const after = await get(path);
    expect(after?.metadata.uid).not.toBe(before?.metadata.uid);
    expect(JSON.stringify(after?.spec)).toContain('registry.local/once:2');
  });

  it('a Service turned headless (clusterIP is immutable), opted in with Flux’s force annotation', async () => {
    const ns = await fx.namespace('pol-svc');
    const service = (extra: string, annotations: Record<string, string> = {}) =>
      `apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n${Object.keys(annotations).length ? annotated(annotations) : ''}` +
      `spec:\n  selector: {app: web}\n  ports: [{port: 80}]\n${extra}`;
    const { repo, url } = await fx.repo('pol-svc', { 'svc.yaml': service('') });
    await fx.syncReady(ns, 'svc', quickSpec(url));
    const path = `/api/v1/namespaces/${ns}/services/web`;
    const before = await get(path);
    expect((before?.spec as { clusterIP?: string }).clusterIP).not.toBe('None');

    await commitFiles(repo, 'main', { 'svc.yaml': service('  clusterIP: None\n') }, 'headless');
    await trigger(ns, 'svc');
    const failed = await waitCondition(ns, 'svc', 'Ready', 'False', 'ImmutableFieldChange');
    expect(ready(failed)?.message).toContain(`Service/${ns}/web: spec.clusterIP`);
    expect(ready(failed)?.message).toContain('svc.yaml');

    const sha = await commitFiles(
      repo,
      'main',
      { 'svc.yaml': service('  clusterIP: None\n', { 'kustomize.toolkit.fluxcd.io/force': 'enabled' }) },
      'opt in',
    );
    await trigger(ns, 'svc');
    await waitReady(ns, 'svc', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    const after = await get(path);
    expect(after?.metadata.uid).not.toBe(before?.metadata.uid);
    expect((after?.spec as { clusterIP?: string }).clusterIP).toBe('None');
  });
});
