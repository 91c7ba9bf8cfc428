/**
 * spec.deletionPolicy on the real API server (core/plan/deletion-policy.ts, engine/finalize.ts): what
 * deleting a PackageSync does to its objects, with Flux's semantics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventReasons, eventually, kube } from './support/cluster.ts';
import { getPackageSync } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, configMap, get, sleep } from './support/safety.ts';

let fx: GitEnvWithController;

beforeAll(async () => {
  fx = await startGitEnv();
});

afterAll(async () => {
  await fx?.dispose();
});

const HOLD = 'example.com/hold';
const held = (name: string) => configMap(name, { v: '1' }, `  finalizers: ["${HOLD}"]\n`);

async function deploy(prefix: string, more: Record<string, unknown>, files: Record<string, string>) {
  const ns = await fx.namespace(prefix);
  const { url } = await fx.repo(prefix, files);
  await fx.syncReady(ns, 'app', { source: { url }, retryInterval: '1s', timeout: '1m', ...more });
  return ns;
}

async function deletePackageSync(ns: string): Promise<void> {
  await (await kube()).request('DELETE', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs/app`);
}

const gone = (ns: string) =>
  eventually(`PackageSync ${ns}/app gone`, async () => (await getPackageSync(ns, 'app')) === undefined);

async function release(ns: string, name: string): Promise<void> {
  await (
    await kube()
  ).request('PATCH', cmPath(ns, name), {
    contentType: 'application/merge-patch+json',
    body: { metadata: { finalizers: null } },
  });
}

describe('spec.deletionPolicy', () => {
  it('MirrorPrune (default) with prune on deletes the objects; with prune off leaves them', async () => {
    const pruning = await deploy('del-mirror-on', {}, { 'a.yaml': configMap('a', { v: '1' }) });
    const keeping = await deploy('del-mirror-off', { prune: false }, { 'a.yaml': configMap('a', { v: '1' }) });
    await deletePackageSync(pruning);
    await deletePackageSync(keeping);
    await gone(pruning);
    await gone(keeping);
    expect(await get(cmPath(pruning, 'a'))).toBeUndefined();
    expect((await get(cmPath(keeping, 'a')))?.data).toEqual({ v: '1' });
  });

  it('Delete deletes even with prune off, and does not wait for an object a finalizer holds; opt-outs stay', async () => {
    const ns = await deploy(
      'del-delete',
      { prune: false, deletionPolicy: 'Delete' },
      {
        'a.yaml': configMap('a', { v: '1' }),
        'held.yaml': held('held'),
        'kept.yaml': configMap('kept', { v: '1' }, '  annotations: {packagesync.io/prune: disabled}\n'),
        'argo.yaml': configMap('argo', { v: '1' }, '  annotations: {argocd.argoproj.io/sync-options: Delete=false}\n'),
      },
    );
    await deletePackageSync(ns);
    await gone(ns);
    expect(await get(cmPath(ns, 'a'))).toBeUndefined();
    expect((await get(cmPath(ns, 'kept')))?.metadata.deletionTimestamp).toBeUndefined();
    expect((await get(cmPath(ns, 'argo')))?.metadata.deletionTimestamp).toBeUndefined();
    // its delete was accepted: it goes once its finalizer's owner lets it
    expect((await get(cmPath(ns, 'held')))?.metadata.deletionTimestamp).toBeDefined();
    await release(ns, 'held');
    await eventually('held gone', async () => (await get(cmPath(ns, 'held'))) === undefined);
  });

  it('Orphan leaves every object, even with prune on', async () => {
    const ns = await deploy('del-orphan', { deletionPolicy: 'Orphan' }, { 'a.yaml': configMap('a', { v: '1' }) });
    await deletePackageSync(ns);
    await gone(ns);
    expect((await get(cmPath(ns, 'a')))?.data).toEqual({ v: '1' });
  });

  it('WaitForTermination keeps the PackageSync until an object held by a finalizer is gone', async () => {
    const ns = await deploy(
      'del-wait',
      { deletionPolicy: 'WaitForTermination' },
      { 'a.yaml': configMap('a', { v: '1' }), 'held.yaml': held('held') },
    );
    await deletePackageSync(ns);
    await eventually('held terminating', async () => (await get(cmPath(ns, 'held')))?.metadata.deletionTimestamp);
    // waited for, not read once: a and held are independent, so their deletes run concurrently (engine/prune.ts)
    // and held's may be answered first
    await eventually('a deleted', async () => (await get(cmPath(ns, 'a'))) === undefined);
    // Delete would have let it go by now (it gives an unawaited object 2 s); this one waits for the object
    await sleep(4000);
    expect((await getPackageSync(ns, 'app'))?.metadata.deletionTimestamp).toBeDefined();
    await release(ns, 'held');
    await gone(ns);
    expect(await get(cmPath(ns, 'held'))).toBeUndefined();
  });

  it('WaitForTermination gives up at spec.timeout: the PackageSync goes, a Warning names what is still there', async () => {
    const ns = await deploy(
      'del-wait-timeout',
      { deletionPolicy: 'WaitForTermination', timeout: '3s' },
      { 'held.yaml': held('held') },
    );
    await deletePackageSync(ns);
    await gone(ns);
    expect((await get(cmPath(ns, 'held')))?.metadata.deletionTimestamp).toBeDefined();
    await eventually('a TerminationTimeout event', async () =>
      (await eventReasons(ns, 'app')).includes('TerminationTimeout'),
    );
    await release(ns, 'held');
  });
});
