/**
 * Who owns what, on the real API server: another PackageSync's objects are never taken over (and two
 * PackageSyncs never take one object from each other in turn), another field manager's fields are never
 * taken silently, immutable fields need spec.force, and a prune that is refused keeps its entry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageSync } from '../src/api/packagesync.ts';
import { commitFiles } from '../test/support/git/index.ts';
import { eventually, kube } from './support/cluster.ts';
import {
  createPackageSync,
  getPackageSync,
  packageSync,
  patchPackageSync,
  waitCondition,
  waitReady,
} from './support/controller.ts';
import { quickSpec, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, configMap, deployment, get, inventoryIds, ready, sleep, trigger } from './support/safety.ts';

let fx: GitEnvWithController;

beforeAll(async () => {
  fx = await startGitEnv();
});

afterAll(async () => {
  await fx?.dispose();
});

describe('ownership', () => {
  it("refuses another PackageSync's object on the second PackageSync only, without flapping", async () => {
    const ns = await fx.namespace('own');
    const a = await fx.repo('own-a', {
      'shared.yaml': configMap('shared', { from: 'a' }),
      'a.yaml': configMap('a-only', { k: 'v' }),
    });
    const b = await fx.repo('own-b', {
      'shared.yaml': configMap('shared', { from: 'b' }),
      'b.yaml': configMap('b-only', { k: 'v' }),
    });
    const firstReady = await fx.syncReady(ns, 'first', quickSpec(a.url, { interval: '2s' }));
    const before = await get(cmPath(ns, 'shared'));

    await fx.sync(ns, 'second', quickSpec(b.url, { interval: '2s' }));
    const second = await waitCondition(ns, 'second', 'Ready', 'False', 'OwnershipConflict');
    expect(ready(second)?.message).toContain(`ConfigMap/${ns}/shared belongs to PackageSync ${ns}/first`);
    expect(second.status?.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('True');
    expect(await get(cmPath(ns, 'b-only'))).toBeUndefined(); // nothing of the second package applied

    // several reconciles of both (interval 2s, retry 1s): nothing moves
    await sleep(7000);
    const first = await getPackageSync(ns, 'first');
    expect(ready(first)?.status).toBe('True');
    expect(ready(first)?.lastTransitionTime).toBe(ready(firstReady)?.lastTransitionTime);
    const after = await get(cmPath(ns, 'shared'));
    expect(after?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
    expect(after?.data?.from).toBe('a');
    const secondLater = await getPackageSync(ns, 'second');
    expect(ready(secondLater)?.reason).toBe('OwnershipConflict');
    expect(ready(secondLater)?.lastTransitionTime).toBe(ready(second)?.lastTransitionTime);
    expect(secondLater?.status?.history?.length).toBeGreaterThan(1); // it did retry
    expect(inventoryIds(secondLater)).toEqual([]);
  });

  it('an object in the inventory that another PackageSync took over is a conflict, not taken back', async () => {
    const ns = await fx.namespace('own-taken');
    const { url } = await fx.repo('own-taken', { 'x.yaml': configMap('x', { v: '1' }) });
    await fx.syncReady(ns, 'mine', quickSpec(url));
    // what a PackageSync applying the same object at the same moment leaves behind: its labels, its data
    await (
      await kube()
    ).request('PATCH', cmPath(ns, 'x'), {
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { 'packagesync.io/name': 'theirs' } }, data: { v: 'theirs' } },
    });
    await trigger(ns, 'mine');
    const failed = await waitCondition(ns, 'mine', 'Ready', 'False', 'OwnershipConflict');
    expect(ready(failed)?.message).toContain(`ConfigMap/${ns}/x belongs to PackageSync ${ns}/theirs`);
    const x = await get(cmPath(ns, 'x'));
    expect(x?.metadata.labels?.['packagesync.io/name']).toBe('theirs');
    expect(x?.data?.v).toBe('theirs');
  });

  it('two PackageSyncs created at once with one object: one keeps it, the other reports the conflict, stably', async () => {
    const ns = await fx.namespace('own-race');
    const files = (who: string) => ({
      'c.yaml': configMap('contested', { v: '1' }),
      [`${who}.yaml`]: configMap(who, { k: 'v' }),
    });
    const left = await fx.repo('race-left', files('left'));
    const right = await fx.repo('race-right', files('right'));
    await Promise.all([
      createPackageSync(packageSync(ns, 'left', fx.controller.shard, quickSpec(left.url, { interval: '2s' }))),
      createPackageSync(packageSync(ns, 'right', fx.controller.shard, quickSpec(right.url, { interval: '2s' }))),
    ]);
    const settled = async () => {
      const [l, r] = await Promise.all([getPackageSync(ns, 'left'), getPackageSync(ns, 'right')]);
      const reasons = [ready(l)?.reason, ready(r)?.reason].sort();
      return reasons[0] === 'OwnershipConflict' && reasons[1] === 'ReconciliationSucceeded' ? [l!, r!] : undefined;
    };
    let pair: PackageSync[] | undefined;
    for (let i = 0; i < 120 && !pair; i++) {
      pair = await settled();
      if (!pair) await sleep(250);
    }
    expect(pair).toBeDefined();
    const winner = pair!.find((p) => ready(p)?.status === 'True')!;
    const loser = pair!.find((p) => ready(p)?.status === 'False')!;
    expect(ready(loser)?.message).toContain(`belongs to PackageSync ${ns}/${winner.metadata.name}`);
    const contested = await get(cmPath(ns, 'contested'));
    expect(contested?.metadata.labels?.['packagesync.io/name']).toBe(winner.metadata.name);

    await sleep(6000); // three intervals of both
    expect(await settled()).toBeDefined();
    expect(ready(await getPackageSync(ns, winner.metadata.name))?.lastTransitionTime).toBe(
      ready(winner)?.lastTransitionTime,
    );
    expect((await get(cmPath(ns, 'contested')))?.metadata.resourceVersion).toBe(contested?.metadata.resourceVersion);
  });
});

describe('field managers', () => {
  it('a field someone else set before the package sets it → ApplyConflict naming the manager; spec.force takes it', async () => {
    const ns = await fx.namespace('fm-edit');
    const { repo, url } = await fx.repo('fm-edit', { 'cm.yaml': configMap('settings', { color: 'blue', size: 's' }) });
    await fx.syncReady(ns, 'edit', quickSpec(url));
    // kubectl edit: GET, change, PUT (an Update) with field manager kubectl-edit. color is ours since the last
    // apply: drift, taken back (docs/adr/0022); extra was never ours
    const client = await kube();
    const live = (await get(cmPath(ns, 'settings')))!;
    await client.request('PUT', cmPath(ns, 'settings'), {
      query: { fieldManager: 'kubectl-edit' },
      body: { ...live, data: { ...live.data, color: 'red', extra: 'theirs' } },
    });
    await eventually('the edit of color is taken back', async () => {
      const data = (await get(cmPath(ns, 'settings')))?.data;
      return data?.color === 'blue' && data.extra === 'theirs';
    });
    // the package now sets extra, a field kubectl-edit owns and we never applied: not taken silently
    await commitFiles(
      repo,
      'main',
      { 'cm.yaml': configMap('settings', { color: 'blue', size: 's', extra: 'ours' }) },
      'extra',
    );
    await trigger(ns, 'edit');
    const failed = await waitCondition(ns, 'edit', 'Ready', 'False', 'ApplyConflict');
    expect(ready(failed)?.message).toContain(`ConfigMap/${ns}/settings: field conflict with other field managers`);
    expect(ready(failed)?.message).toContain('"kubectl-edit" (.data.extra)');
    expect((await get(cmPath(ns, 'settings')))?.data).toEqual({ color: 'blue', size: 's', extra: 'theirs' });

    await patchPackageSync(ns, 'edit', { spec: { force: true } });
    await waitReady(ns, 'edit');
    const taken = await get(cmPath(ns, 'settings'));
    expect(taken?.data).toEqual({ color: 'blue', size: 's', extra: 'ours' });
    const managers = (taken?.metadata.managedFields as { manager: string; fieldsV1: unknown }[]) ?? [];
    const edit = managers.find((m) => m.manager === 'kubectl-edit');
    expect(JSON.stringify(edit?.fieldsV1 ?? {})).not.toContain('f:extra');
  });

  it("leaves alone a field another controller owns that the package omits (an HPA's replicas)", async () => {
    const ns = await fx.namespace('fm-hpa');
    const { repo, url } = await fx.repo('fm-hpa', { 'd.yaml': deployment('scaled') });
    await fx.syncReady(ns, 'hpa', quickSpec(url));
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/scaled`;
    await (
      await kube()
    ).request('PATCH', path, {
      query: { fieldManager: 'hpa-sim' },
      contentType: 'application/apply-patch+yaml',
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'scaled' }, spec: { replicas: 3 } },
    });
    const sha = await commitFiles(
      repo,
      'main',
      { 'd.yaml': deployment('scaled', { image: 'registry.local/scaled:2' }) },
      'v2',
    );
    await trigger(ns, 'hpa');
    const done = await waitReady(ns, 'hpa', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    expect(ready(done)?.message).toContain('1 configured');
    const live = await get(path);
    expect((live?.spec as { replicas: number }).replicas).toBe(3);
    expect(JSON.stringify(live?.spec)).toContain('registry.local/scaled:2');
  });
});

describe('immutable fields', () => {
  it('a changed Deployment selector → ImmutableFieldChange; with spec.force deleted, awaited and recreated', async () => {
    const ns = await fx.namespace('imm-deploy');
    const { repo, url } = await fx.repo('imm-deploy', { 'd.yaml': deployment('web') });
    await fx.syncReady(ns, 'imm', quickSpec(url));
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/web`;
    const before = await get(path);
    const sha = await commitFiles(repo, 'main', { 'd.yaml': deployment('web', { selector: 'web-v2' }) }, 'selector');
    await trigger(ns, 'imm');
    const failed = await waitCondition(ns, 'imm', 'Ready', 'False', 'ImmutableFieldChange');
    expect(ready(failed)?.message).toContain(`Deployment/${ns}/web: spec.selector cannot be changed`);
    expect(ready(failed)?.message).toContain('spec.force: true');
    expect((await get(path))?.metadata.uid).toBe(before?.metadata.uid);

    await patchPackageSync(ns, 'imm', { spec: { force: true } });
    await waitReady(ns, 'imm', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    const after = await get(path);
    expect(after?.metadata.uid).not.toBe(before?.metadata.uid);
    expect(JSON.stringify(after?.spec)).toContain('web-v2');
  });

  it('a changed Job template → ImmutableFieldChange naming spec.template, in a short message', async () => {
    const ns = await fx.namespace('imm-job');
    const job = (image: string) =>
      `apiVersion: batch/v1\nkind: Job\nmetadata: {name: once}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: "${image}"}]\n`;
    const { repo, url } = await fx.repo('imm-job', { 'job.yaml': job('registry.local/once:1') });
    await fx.syncReady(ns, 'job', quickSpec(url, { wait: false }));
    await commitFiles(repo, 'main', { 'job.yaml': job('registry.local/once:2') }, 'v2');
    await trigger(ns, 'job');
    const failed = await waitCondition(ns, 'job', 'Ready', 'False', 'ImmutableFieldChange');
    expect(ready(failed)?.message).toContain(`Job/${ns}/once: spec.template cannot be changed`);
    expect(ready(failed)?.message.length).toBeLessThan(300);
  });
});

describe('refused prunes', () => {
  it('an object held by a finalizer keeps its inventory entry and is reported until it is gone', async () => {
    const ns = await fx.namespace('prune-fin');
    const { repo, url } = await fx.repo('prune-fin', {
      'keep.yaml': configMap('keep', { k: 'v' }),
      'held.yaml': configMap('held', { k: 'v' }),
    });
    const first = await fx.syncReady(ns, 'fin', quickSpec(url));
    // another controller guards the object with a finalizer it never removes
    await (
      await kube()
    ).request('PATCH', cmPath(ns, 'held'), {
      contentType: 'application/merge-patch+json',
      body: { metadata: { finalizers: ['example.com/hold'] } },
    });
    const sha = await commitFiles(repo, 'main', { 'held.yaml': null }, 'drop held');
    await trigger(ns, 'fin');
    const failed = await waitCondition(ns, 'fin', 'Ready', 'False', 'PruneFailed');
    expect(ready(failed)?.message).toContain(
      `ConfigMap/${ns}/held: deleted but still terminating, held by finalizer(s) example.com/hold`,
    );
    expect(inventoryIds(failed)).toEqual([`${ns}_held__ConfigMap`, `${ns}_keep__ConfigMap`]);
    expect(failed.status?.lastAppliedRevision).toBe(first.status?.lastAppliedRevision);
    expect((await get(cmPath(ns, 'held')))?.metadata.deletionTimestamp).toBeDefined();

    await (
      await kube()
    ).request('PATCH', cmPath(ns, 'held'), {
      contentType: 'application/merge-patch+json',
      body: { metadata: { finalizers: null } },
    });
    const done = await waitReady(ns, 'fin', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    expect(inventoryIds(done)).toEqual([`${ns}_keep__ConfigMap`]);
  });
});
