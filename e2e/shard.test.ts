/**
 * Sharding with --watch-label-selector: two controllers, each on its own selector and each with leader
 * election on in the same namespace, reconcile only their own PackageSyncs, at the same time; relabelling
 * a PackageSync moves it from one shard to the other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kube } from './support/cluster.ts';
import {
  SHARD_LABEL,
  createPackageSync,
  packageSync,
  patchPackageSync,
  waitReady,
  type ControllerHandle,
} from './support/controller.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';

let env: GitEnv;
let leases: string;
let a: ControllerHandle;
let b: ControllerHandle;

beforeAll(async () => {
  env = await startGitEnv(false);
  leases = await env.namespace('e2e-shard-leases');
  // Same lease namespace, no --leader-election-id: each selector must get a Lease of its own, or one shard
  // would stand by behind the other's leader for good.
  const args = ['--leader-elect', '--leader-election-namespace', leases];
  [a, b] = await Promise.all([env.startController({ args }), env.startController({ args })]);
});

afterAll(async () => {
  await env?.dispose();
});

/** The PackageSyncs (namespace/name) a controller's per-reconcile log lines name. */
function reconciledBy(c: ControllerHandle): Set<string> {
  const seen = new Set<string>();
  for (const line of c.logs) {
    try {
      const l = JSON.parse(line) as { namespace?: string; name?: string; reconcileID?: string };
      if (l.reconcileID && l.namespace && l.name) seen.add(`${l.namespace}/${l.name}`);
    } catch {
      // not a log line
    }
  }
  return seen;
}

describe('two controller shards', () => {
  it('each reconciles only its own PackageSyncs, both leading at once; relabelling moves one', async () => {
    const ns = await env.namespace('e2e-shard');
    const { repo, url } = await env.repo('shard', { 'a.yaml': configMap('a', { k: '1' }) });
    for (const [name, shard] of [
      ['one', a.shard],
      ['two', b.shard],
    ] as const) {
      const target = await env.namespace(`e2e-shard-${name}`);
      await createPackageSync(
        packageSync(ns, name, shard, { source: { url }, targetNamespace: target, interval: '1h' }),
      );
    }
    // both shards work at the same time: neither waits for the other's Lease
    await Promise.all([waitReady(ns, 'one', () => true, 45_000), waitReady(ns, 'two', () => true, 45_000)]);
    expect([...reconciledBy(a)]).toEqual([`${ns}/one`]);
    expect([...reconciledBy(b)]).toEqual([`${ns}/two`]);
    const list = await (
      await kube()
    ).request<{ items: { metadata: { name: string } }[] }>(
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/${leases}/leases`,
    );
    expect(list.items.map((l) => l.metadata.name).sort()).toHaveLength(2);
    expect(list.items.every((l) => l.metadata.name.startsWith('packagesync-controller-leader-'))).toBe(true);

    // move `one` to shard b: b takes it up, a lets go of it
    const before = a.logs.length;
    await patchPackageSync(ns, 'one', { metadata: { labels: { [SHARD_LABEL]: b.shard } } });
    const sha = await env.commit(repo, { 'a.yaml': configMap('a', { k: '2' }) });
    await patchPackageSync(ns, 'one', {
      metadata: { annotations: { 'packagesync.io/reconcile-requested-at': 'moved' } },
    });
    await waitReady(ns, 'one', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    await eventually('b reconciled one', async () => reconciledBy(b).has(`${ns}/one`));
    const aAfter = a.logs.slice(before).filter((l) => l.includes(`"name":"one"`) && l.includes('reconcileID'));
    expect(aAfter).toEqual([]);
  });
});
