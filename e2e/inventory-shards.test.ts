/**
 * An inventory past the spill threshold (ADR 0027), on the real control plane, with a threshold of 20 objects
 * so the package stays small: the inventory moves into shard ConfigMaps owned by the PackageSync; a resync
 * writes nothing; a prune of half shrinks it and the shards no status names are gone; deleting the
 * PackageSync takes its objects and its shards with it. And an inventory an earlier controller kept in
 * status (Flux's format) is read and moved into shards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageSync } from '../src/api/packagesync.ts';
import { PackageSyncs, packageSyncCollectionPath } from '../src/adapters/kube/packagesyncs.ts';
import { SHARD_OWNER_LABEL } from '../src/adapters/kube/inventory-shards.ts';
import { eventually, kube } from './support/cluster.ts';
import {
  createPackageSync,
  getPackageSync,
  httpBase,
  packageSync,
  waitReady,
  type ControllerHandle,
} from './support/controller.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';
import { inventoryIds, trigger } from './support/safety.ts';

const SPILL = ['--inventory-spill-threshold', '20', '--inventory-shard-entries', '8'];
const METRICS = ['--metrics-bind-address', '127.0.0.1:0', '--health-probe-bind-address', '127.0.0.1:0'];

let env: GitEnv;

beforeAll(async () => {
  env = await startGitEnv(false);
});

afterAll(async () => {
  await env?.dispose();
});

const name = (i: number) => `cm-${String(i).padStart(3, '0')}`;
const files = (from: number, to: number, deleted: number[] = []) => {
  const out: Record<string, string | null> = {};
  for (let i = from; i < to; i++) out[`${name(i)}.yaml`] = configMap(name(i), { i: String(i) });
  for (const i of deleted) out[`${name(i)}.yaml`] = null;
  return out;
};

async function stored(ns: string, ps: string): Promise<PackageSync> {
  return (await new PackageSyncs(await kube()).getStored(ns, ps))!;
}

async function shardsOf(ns: string, uid: string): Promise<string[]> {
  const list = await (
    await kube()
  ).request<{ items: { metadata: { name: string } }[] }>('GET', `/api/v1/namespaces/${ns}/configmaps`, {
    query: { labelSelector: `${SHARD_OWNER_LABEL}=${uid}` },
  });
  return list.items.map((i) => i.metadata.name).sort();
}

async function owned(ns: string, ps: string): Promise<string[]> {
  const list = await (
    await kube()
  ).request<{ items: { metadata: { name: string } }[] }>('GET', `/api/v1/namespaces/${ns}/configmaps`, {
    query: { labelSelector: `packagesync.io/name=${ps},packagesync.io/namespace=${ns}` },
  });
  return list.items.map((i) => i.metadata.name).sort();
}

async function metric(c: ControllerHandle, metricName: string, label: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${await httpBase(c)}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metricName}{`)) continue;
    const value = new RegExp(`${label}="([^"]*)"`).exec(line)?.[1] ?? '';
    out[value] = (out[value] ?? 0) + Number(line.split(' ').pop());
  }
  return out;
}
const sum = (r: Record<string, number>, keys?: string[]) =>
  Object.entries(r).reduce((a, [k, v]) => a + (!keys || keys.includes(k) ? v : 0), 0);
const WRITES = ['POST', 'PUT', 'PATCH', 'DELETE'];

describe('an inventory past the spill threshold', () => {
  it('lives in owned shards: applied, resynced with 0 writes, half pruned, then deleted with its shards', async () => {
    const controller = await env.startController({ args: [...SPILL, ...METRICS] });
    const ns = await env.namespace('e2e-shards');
    const { repo, url } = await env.repo('shards', files(0, 60));
    await createPackageSync(packageSync(ns, 'big', controller.shard, { source: { url }, interval: '2s', wait: false }));
    const ready = await waitReady(ns, 'big', (ps) => inventoryIds(ps).length === 60);
    expect(inventoryIds(ready)).toEqual(Array.from({ length: 60 }, (_, i) => `${ns}_${name(i)}__ConfigMap`));

    // as stored: no entries in status, the shards named with their digests and counts, each one owned
    const raw = await stored(ns, 'big');
    const uid = raw.metadata.uid!;
    expect(raw.status?.inventory?.entries).toEqual([]);
    expect(raw.status?.inventory?.count).toBe(60);
    const shards = raw.status!.inventory!.shards!;
    expect(shards.length).toBeGreaterThan(1);
    expect(shards.reduce((a, s) => a + s.count, 0)).toBe(60);
    expect(await shardsOf(ns, uid)).toEqual(shards.map((s) => s.name).sort());
    const shard = await (
      await kube()
    ).request<{ immutable?: boolean; metadata: { ownerReferences?: { uid: string; kind: string }[] } }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps/${shards[0]!.name}`,
    );
    expect(shard.immutable).toBe(true);
    expect(shard.metadata.ownerReferences).toMatchObject([{ kind: 'PackageSync', uid }]);

    // a resync of the unchanged package (interval 2s): reconciles, writes nothing (and reads no shard: the
    // PackageSync and the live objects come from the watches, the shards from the cache)
    // counted from the end of a reconcile after the one that made it Ready: that one's last writes (its event)
    // may still be on their way when Ready is seen
    const settled = sum(await metric(controller, 'packagesync_reconcile_total', 'result'));
    await eventually(
      'a reconcile after Ready',
      async () => sum(await metric(controller, 'packagesync_reconcile_total', 'result')) >= settled + 1,
      { timeoutMs: 30_000 },
    );
    const before = await metric(controller, 'packagesync_api_requests_total', 'verb');
    const reconciles = sum(await metric(controller, 'packagesync_reconcile_total', 'result'));
    const resourceVersion = (await stored(ns, 'big')).metadata.resourceVersion;
    await eventually(
      'two more reconciles',
      async () => sum(await metric(controller, 'packagesync_reconcile_total', 'result')) >= reconciles + 2,
      { timeoutMs: 30_000 },
    );
    const after = await metric(controller, 'packagesync_api_requests_total', 'verb');
    expect(sum(after, WRITES) - sum(before, WRITES)).toBe(0);
    expect((await stored(ns, 'big')).metadata.resourceVersion).toBe(resourceVersion);

    // prune half: exactly those gone, the rest there, inventory = live, no shard left that status does not name
    await env.commit(
      repo,
      files(
        0,
        0,
        Array.from({ length: 30 }, (_, i) => 2 * i),
      ),
    );
    await trigger(ns, 'big');
    const pruned = await waitReady(ns, 'big', (ps) => inventoryIds(ps).length === 30);
    const kept = Array.from({ length: 30 }, (_, i) => name(2 * i + 1));
    await eventually('the 30 removed objects are gone', async () => (await owned(ns, 'big')).length === 30);
    expect(await owned(ns, 'big')).toEqual(kept);
    expect(inventoryIds(pruned)).toEqual(kept.map((n) => `${ns}_${n}__ConfigMap`));
    const rawPruned = await stored(ns, 'big');
    expect(rawPruned.status?.inventory?.count).toBe(30);
    // the shards of the inventory before are deleted once the status naming the new ones is written (a crash
    // between the two leaves extra shards, never a status naming a missing one): they go just after Ready
    const named = rawPruned.status!.inventory!.shards!.map((s) => s.name).sort();
    await eventually('no shard left that status does not name', async () =>
      JSON.stringify(await shardsOf(ns, uid)) === JSON.stringify(named) ? true : undefined,
    );

    // delete the PackageSync: its objects pruned by the finalizer, its shards by the garbage collector
    await (await kube()).request('DELETE', `${packageSyncCollectionPath(ns)}/big`);
    await eventually('the PackageSync is gone', async () => !(await getPackageSync(ns, 'big')), { timeoutMs: 60_000 });
    expect(await owned(ns, 'big')).toEqual([]);
    await eventually('its shards are gone', async () => (await shardsOf(ns, uid)).length === 0, {
      timeoutMs: 60_000,
    });
  });

  it('reads an inventory an earlier controller kept in status, prunes from it, and moves it into shards', async () => {
    const ns = await env.namespace('e2e-shards-legacy');
    const { repo, url } = await env.repo('shards-legacy', files(0, 30));
    // an earlier controller (the default threshold): the 30 entries stay in status, Flux's format
    const old = await env.startController();
    await createPackageSync(packageSync(ns, 'legacy', old.shard, { source: { url }, interval: '1h', wait: false }));
    await waitReady(ns, 'legacy', (ps) => inventoryIds(ps).length === 30);
    expect((await stored(ns, 'legacy')).status?.inventory?.entries).toHaveLength(30);
    await old.stop();

    // the new one, on the same shard, with a threshold of 20; the package loses 3 objects
    await env.startController({ shard: old.shard, args: SPILL });
    await env.commit(repo, files(0, 0, [0, 1, 2]));
    await trigger(ns, 'legacy');
    const migrated = await waitReady(ns, 'legacy', (ps) => inventoryIds(ps).length === 27);
    expect(await owned(ns, 'legacy')).toEqual(Array.from({ length: 27 }, (_, i) => name(i + 3)));
    expect(inventoryIds(migrated)).toEqual(Array.from({ length: 27 }, (_, i) => `${ns}_${name(i + 3)}__ConfigMap`));
    const raw = await stored(ns, 'legacy');
    expect(raw.status?.inventory?.entries).toEqual([]);
    expect(raw.status?.inventory?.count).toBe(27);
    expect(await shardsOf(ns, raw.metadata.uid!)).toEqual(raw.status!.inventory!.shards!.map((s) => s.name).sort());
  });

  it('a late write from a stale copy keeps the entries written meanwhile, shards and all', async () => {
    const ns = await env.namespace('e2e-shards-rv');
    // no controller watches this shard: only the test writes
    const ps = await createPackageSync(
      packageSync(ns, 'rv', 'nobody', { source: { url: 'https://example.com/x.git' } }),
    );
    const syncs = new PackageSyncs(await kube(), 'e2e', { spillAbove: 5, shardEntries: 4 });
    const entries = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => ({ id: `${ns}_${name(from + i)}__ConfigMap`, v: 'v1' }));
    // one writer saves old ∪ new (0..40, spilled) …
    const first = (await syncs.writeStatus(ps, { inventory: { entries: entries(0, 40) } })) as PackageSync;
    expect(first.status?.inventory?.shards?.length).toBeGreaterThan(1);
    // … and a write built from the copy read before it (0..10 and 40..50) arrives afterwards: the guard refuses
    // it, the retry reads the other writer's shards and keeps every entry
    const late = await syncs.writeStatus(ps, { inventory: { entries: [...entries(0, 10), ...entries(40, 50)] } });
    expect(inventoryIds(late)).toEqual(entries(0, 50).map((e) => e.id));
    // what another reader (a fresh cache) sees, and only the shards status names are left
    expect(inventoryIds(await getPackageSync(ns, 'rv'))).toEqual(entries(0, 50).map((e) => e.id));
    const raw = await stored(ns, 'rv');
    expect(raw.status?.inventory?.count).toBe(50);
    expect(await shardsOf(ns, raw.metadata.uid!)).toEqual(raw.status!.inventory!.shards!.map((s) => s.name).sort());

    // back under the threshold: inline again (Flux's format), and no shard left behind
    const small = await syncs.writeStatus(late!, { inventory: { entries: entries(0, 3) } });
    expect(inventoryIds(small)).toEqual(entries(0, 3).map((e) => e.id));
    const inline = await stored(ns, 'rv');
    expect(inline.status?.inventory).toEqual({ entries: entries(0, 3) });
    expect(await shardsOf(ns, raw.metadata.uid!)).toEqual([]);

    // a shard someone deleted: the reader refuses the inventory instead of returning a shorter one
    const again = (await syncs.writeStatus(small!, { inventory: { entries: entries(0, 20) } })) as PackageSync;
    const victim = again.status!.inventory!.shards![0]!.name;
    await (await kube()).request('DELETE', `/api/v1/namespaces/${ns}/configmaps/${victim}`);
    await expect(new PackageSyncs(await kube()).get(ns, 'rv')).rejects.toThrow(/InventoryUnreadable|does not exist/);
  });
});
