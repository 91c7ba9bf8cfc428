/**
 * The deletion budget: a revision that would delete more than spec.pruneBudget allows (default: more than 10
 * objects and more than half the inventory) stops before anything is applied or deleted, Stalled with a
 * message that says how to approve it; approving that revision with the annotation lets it through at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRUNE_APPROVED } from '../src/api/packagesync.ts';
import { createPackageSync, patchPackageSync, waitCondition, waitReady } from './support/controller.ts';
import { packageSync } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';
import { eventReasons } from './support/cluster.ts';
import { cmPath, get, inventoryIds, ready } from './support/safety.ts';

let env: GitEnv;
beforeAll(async () => {
  env = await startGitEnv();
});
afterAll(async () => {
  await env?.dispose();
});

describe('prune budget', () => {
  it('stops a revision that drops most of the package until it is approved', async () => {
    const ns = await env.namespace('e2e-prune-budget');
    const files = Object.fromEntries(
      Array.from({ length: 15 }, (_, i) => [`cm-${i}.yaml`, configMap(`cm-${i}`, { v: '1' })]),
    );
    const { repo, url } = await env.repo('budget', files);
    await createPackageSync(packageSync(ns, 'ps', env.controller!.shard, { source: { url }, interval: '1h' }));
    await waitReady(ns, 'ps');

    // 11 of 15 leave (73%), and cm-0 changes in the same commit
    const gone = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`cm-${i + 4}.yaml`, null]));
    const sha = await env.commit(repo, { ...gone, 'cm-0.yaml': configMap('cm-0', { v: '2' }) });
    await patchPackageSync(ns, 'ps', { metadata: { annotations: { 'packagesync.io/reconcile-requested-at': '1' } } });
    const stopped = await waitCondition(ns, 'ps', 'Stalled', 'True', 'PruneBudgetExceeded');
    const revision = `main@sha1:${sha}`;
    expect(ready(stopped)?.message).toContain(`would delete 11 of the 15 objects in the inventory (73%)`);
    expect(ready(stopped)?.message).toContain(`kubectl annotate pks/ps -n ${ns} ${PRUNE_APPROVED}=${revision}`);
    // nothing applied, nothing deleted, the inventory stands
    expect(inventoryIds(stopped)).toHaveLength(15);
    expect((await get(cmPath(ns, 'cm-0')))?.data).toEqual({ v: '1' });
    expect(await get(cmPath(ns, 'cm-14'))).toBeDefined();

    await patchPackageSync(ns, 'ps', { metadata: { annotations: { [PRUNE_APPROVED]: revision } } });
    const approved = await waitReady(ns, 'ps', (ps) => ps.status?.lastAppliedRevision === revision);
    expect(inventoryIds(approved)).toHaveLength(4);
    expect(await get(cmPath(ns, 'cm-14'))).toBeUndefined();
    expect((await get(cmPath(ns, 'cm-0')))?.data).toEqual({ v: '2' });
  });

  it('leaves a Namespace that left the package in the cluster, unless pruneProtectedKinds', async () => {
    const ns = await env.namespace('e2e-protected');
    const extra = `${ns}-extra`;
    env.adoptNamespace(extra);
    const nsYaml = `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${extra}}\n`;
    const { repo, url } = await env.repo('protected', { 'ns.yaml': nsYaml, 'cm.yaml': configMap('a', { v: '1' }) });
    await createPackageSync(packageSync(ns, 'ps', env.controller!.shard, { source: { url }, interval: '1h' }));
    await waitReady(ns, 'ps');
    const sha = await env.commit(repo, { 'ns.yaml': null });
    await patchPackageSync(ns, 'ps', { metadata: { annotations: { 'packagesync.io/reconcile-requested-at': '1' } } });
    const done = await waitReady(ns, 'ps', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    expect(inventoryIds(done)).toEqual([`${ns}_a__ConfigMap`]);
    const live = await get(`/api/v1/namespaces/${extra}`);
    expect(live?.metadata.deletionTimestamp).toBeUndefined();
    expect(await eventReasons(ns, 'ps')).toContain('Released');
  });
});
