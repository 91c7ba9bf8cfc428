/**
 * The API server dies in the middle of an apply (SIGKILL, on a private control plane), and comes back:
 * the reconcile it cut short fails cleanly, the controller process lives on, the next reconcile
 * succeeds, and nothing is lost — every object applied and listed in the inventory.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../src/adapters/kube/client.ts';
import { packageSyncCollectionPath, PackageSyncs } from '../src/adapters/kube/packagesyncs.ts';
import { conditionOf } from '../src/core/status.ts';
import { eventually } from './support/cluster.ts';
import { packageSync, type ControllerHandle } from './support/controller.ts';
import { startGitEnv, type GitEnv } from './support/git-env.ts';
import { startPrivateCluster, type PrivateCluster } from './support/private-cluster.ts';
import { configMap, sleep } from './support/safety.ts';
import { waitEstablished } from '../test/support/crd-established.ts';

let cluster: PrivateCluster;
let client: KubeClient;
let controller: ControllerHandle;
let fx: GitEnv;

beforeAll(async () => {
  cluster = await startPrivateCluster();
  await cluster.kubectl('apply', '--server-side', '-f', resolve(import.meta.dirname, '../crds'));
  await waitEstablished(cluster.kubectl, 'packagesyncs.packagesync.io');
  client = await KubeClient.create({ kubeconfig: cluster.kubeconfig, requestTimeoutMs: 5000 });
  fx = await startGitEnv(false, { crds: false }); // the CRDs go to the private cluster, above
  // --kubeconfig given twice: the last one wins, so this controller works on the private cluster
  controller = await fx.startController({ args: ['--kubeconfig', cluster.kubeconfig, '--apply-concurrency', '2'] });
}, 300_000);

afterAll(async () => {
  await fx?.dispose();
  await client?.close();
  await cluster?.down();
});

describe('an API server restart mid-reconcile', () => {
  it('fails that reconcile cleanly; the next one succeeds and nothing is lost', async () => {
    const ns = 'restart';
    await client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
    const files = Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [`cm-${i}.yaml`, configMap(`cm-${i}`, { i: String(i) })]),
    );
    const { url, sha } = await fx.repo('restart', files);
    const syncs = new PackageSyncs(client);
    await client.request('POST', packageSyncCollectionPath(ns), {
      body: packageSync(ns, 'big', controller.shard, { source: { url }, retryInterval: '2s', wait: false }),
    });

    // kill it while the objects are being applied
    await eventually(
      'the apply to be under way',
      async () => {
        const list = await client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/configmaps`, {
          query: { labelSelector: 'packagesync.io/name=big' },
        });
        return list.items.length >= 20;
      },
      { intervalMs: 20 },
    );
    await cluster.killApiServer();
    await sleep(3000); // the controller meets a dead API server: refused connections, timeouts
    await cluster.startApiServer();

    const ready = await eventually(
      'Ready after the restart',
      async () => {
        const ps = await syncs.get(ns, 'big');
        return conditionOf(ps?.status, 'Ready')?.status === 'True' && ps;
      },
      { timeoutMs: 120_000 },
    );
    expect(ready.status?.lastAppliedRevision).toBe(`main@sha1:${sha}`);
    expect(ready.status?.inventory?.entries).toHaveLength(300);
    const list = await client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/configmaps`, {
      query: { labelSelector: 'packagesync.io/name=big' },
    });
    expect(list.items).toHaveLength(300);
    expect(controller.process.exitCode).toBeNull(); // it lived through it
    // the cut-short reconcile failed and was retried (not silently dropped)
    const logs = controller.logs.join('\n');
    expect(logs).toMatch(/reconcile failed unexpectedly|"reason":"ApplyFailed"/);
    expect(logs).toContain('PackageSync watch interrupted; resuming');
  });
});
