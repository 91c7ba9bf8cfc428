/**
 * API faults on the real API server: an expired watch relists once and goes on; a watch that goes
 * silent is noticed and restarted; concurrent status writes and a stale finalizer patch succeed; and a
 * PackageSync whose git server hangs holds one reconcile slot, never the others.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../src/adapters/kube/client.ts';
import { Informer } from '../src/adapters/kube/informer.ts';
import { PackageSyncs } from '../src/adapters/kube/packagesyncs.ts';
import type { PackageSync } from '../src/api/packagesync.ts';
import { eventually, kube, kubeconfig } from './support/cluster.ts';
import {
  createPackageSync,
  getPackageSync,
  packageSync,
  startController,
  waitReady,
  type ControllerHandle,
} from './support/controller.ts';
import { startGitEnv, type GitEnv } from './support/git-env.ts';
import { startFreezableProxy } from './support/freezable-proxy.ts';
import { cmPath, configMap, ready } from './support/safety.ts';

let fx: GitEnv;
let dir: string;

beforeAll(async () => {
  fx = await startGitEnv(false);
  dir = await mkdtemp(join(tmpdir(), 'psync-api-'));
});

afterAll(async () => {
  await fx?.dispose();
  await rm(dir, { recursive: true, force: true });
});

const createConfigMap = async (ns: string, name: string) =>
  (await kube()).request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name } } });

describe('the informer', () => {
  // 410 Gone handling is unit-tested (test/safety/informer.test.ts): on a freshly started control plane the API
  // server still serves an old resourceVersion, so a 410 cannot be provoked here deterministically.

  it("indexes objects by the owners they name, following updates and deletes (the health wait's children)", async () => {
    const ns = await fx.namespace('inf-owner');
    const client = await kube();
    const owner = await client.request<{ metadata: { uid: string } }>('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { metadata: { name: 'owner' } },
    });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid, controller: true };
    for (const name of ['child-a', 'child-b'])
      await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        body: { metadata: { name, ownerReferences: [ref] } },
      });
    const informer = new Informer(client, { path: `/api/v1/namespaces/${ns}/configmaps` });
    try {
      informer.start();
      await informer.synced;
      const names = () =>
        informer
          .ownedBy(ns, 'owner')
          .map((o) => o.metadata.name)
          .sort();
      expect(names()).toEqual(['child-a', 'child-b']);
      await client.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/child-a`, {
        contentType: 'application/merge-patch+json',
        body: { metadata: { ownerReferences: null } },
      });
      await client.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/child-b`);
      await eventually('the index follows', async () => names().length === 0);
      expect(informer.ownedBy(ns, 'nobody')).toEqual([]);
    } finally {
      informer.stop();
    }
  });

  it('syncs on an empty collection listed as metadata only (the API server sends "items": null)', async () => {
    // seen in the bench: a cluster with no Secret at all kept the config watch from ever syncing
    const ns = await fx.namespace('inf-empty');
    const errors: string[] = [];
    const informer = new Informer(await kube(), {
      path: `/api/v1/namespaces/${ns}/secrets`,
      metadataOnly: { keep: (o) => o },
      onError: (e) => errors.push(String(e)),
    });
    try {
      informer.start();
      const synced = await Promise.race([
        informer.synced.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 20_000)),
      ]);
      expect(errors).toEqual([]);
      expect(synced).toBe(true);
      expect(informer.cache.size).toBe(0);
    } finally {
      informer.stop();
    }
  });

  it('notices a watch that went silent (a frozen connection) and restarts it', async () => {
    const ns = await fx.namespace('inf-dead');
    const server = new URL((await kube()).server);
    const proxy = await startFreezableProxy({ host: server.hostname, port: Number(server.port) });
    const client = await KubeClient.create({
      kubeconfig: await proxy.kubeconfigVia(kubeconfig(), join(dir, 'via-proxy')),
      requestTimeoutMs: 2000,
    });
    const errors: string[] = [];
    const informer = new Informer(client, {
      path: `/api/v1/namespaces/${ns}/configmaps`,
      watchTimeoutSeconds: 2,
      deadmanMarginMs: 1000,
      onError: (e) => errors.push(String(e)),
    });
    try {
      informer.start();
      await informer.synced;
      proxy.freeze(); // the watch (and any idle keep-alive connection) now hears nothing, ever
      const frozenAt = proxy.connections();
      await createConfigMap(ns, 'while-frozen');
      await eventually('the event, through a new watch', async () => informer.cache.has(`${ns}/while-frozen`), {
        timeoutMs: 20_000,
      });
      expect(proxy.connections()).toBeGreaterThan(frozenAt);
      expect(errors.join('\n')).toMatch(/watch went silent|no answer from the API server/);
    } finally {
      informer.stop();
      await client.close();
      await proxy.close();
    }
  });

  it('caches objects without managedFields, from the list and from the watch, indexed by namespace', async () => {
    const ns = await fx.namespace('inf-slim');
    // a field set, or the server records no managedFields at all
    const create = (name: string) =>
      kube().then((c) =>
        c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name }, data: { a: '1' } } }),
      );
    await create('listed');
    const informer = new Informer(await kube(), { path: `/api/v1/namespaces/${ns}/configmaps` });
    try {
      informer.start();
      await informer.synced;
      await create('watched');
      await eventually('the watched object', async () => informer.cache.has(`${ns}/watched`), { timeoutMs: 10_000 });
      const live = await (
        await kube()
      ).request<{ metadata: { managedFields?: unknown[] } }>('GET', `/api/v1/namespaces/${ns}/configmaps/watched`);
      expect(live.metadata.managedFields?.length).toBeGreaterThan(0); // the server has them
      for (const name of ['listed', 'watched']) {
        const cached = informer.cache.get(`${ns}/${name}`)!;
        expect(cached.metadata.name).toBe(name);
        expect(cached.metadata).not.toHaveProperty('managedFields');
        expect(informer.get(ns, name)).toBe(cached); // the namespace index agrees with the cache
      }
      const names = () => informer.inNamespace(ns).map((o) => o.metadata.name);
      expect(names()).toEqual(expect.arrayContaining(['listed', 'watched']));
      await (await kube()).request('DELETE', `/api/v1/namespaces/${ns}/configmaps/listed`);
      await eventually('the delete', async () => !informer.cache.has(`${ns}/listed`), { timeoutMs: 10_000 });
      expect(informer.get(ns, 'listed')).toBeUndefined();
      expect(names()).toContain('watched');
      expect(names()).not.toContain('listed');
    } finally {
      informer.stop();
    }
  });
});

describe('status writes', () => {
  it('concurrent status writes and a finalizer patch from a stale copy all succeed', async () => {
    const ns = await fx.namespace('status');
    // no controller watches this shard: only the test writes
    const ps = await createPackageSync(
      packageSync(ns, 'st', 'nobody', { source: { url: 'https://example.com/x.git' } }),
    );
    const syncs = new PackageSyncs(await kube());
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => syncs.writeStatus(ps, { lastAttemptedRevision: `rev-${i}` })),
    );
    expect((await getPackageSync(ns, 'st'))?.status?.lastAttemptedRevision).toMatch(/^rev-\d+$/);
    // `ps` is stale now (its resourceVersion is old): the optimistic patch conflicts, re-reads, succeeds
    await syncs.setAnnotation(ns, 'st', 'touched', 'yes');
    const withFinalizer = await syncs.setFinalizer(ps, 'example.com/test', true);
    expect(withFinalizer?.metadata.finalizers).toContain('example.com/test');
    expect(withFinalizer?.metadata.annotations?.touched).toBe('yes');
    await syncs.setFinalizer(withFinalizer as PackageSync, 'example.com/test', false);
  });

  it('a late write from a stale copy never drops inventory entries written meanwhile', async () => {
    const ns = await fx.namespace('status-rv');
    const ps = await createPackageSync(
      packageSync(ns, 'rv', 'nobody', { source: { url: 'https://example.com/x.git' } }),
    );
    const syncs = new PackageSyncs(await kube());
    const entry = (name: string) => ({ id: `${ns}_${name}__ConfigMap`, v: 'v1' });
    // one writer saves old ∪ new ({a, b}) …
    const first = (await syncs.writeStatus(ps, { inventory: { entries: [entry('a'), entry('b')] } })) as PackageSync;
    expect(Number(first.metadata.resourceVersion)).toBeGreaterThan(Number(ps.metadata.resourceVersion));
    // … and a write built from the copy read before it ({a} only) arrives afterwards: the guard refuses it,
    // the retry keeps b
    const late = await syncs.writeStatus(ps, {
      inventory: { entries: [entry('a')] },
      lastAttemptedRevision: 'late',
    });
    expect(late?.status?.inventory?.entries.map((e) => e.id)).toEqual([entry('a').id, entry('b').id]);
    expect(late?.status?.lastAttemptedRevision).toBe('late');

    // a change of metadata only (a trigger annotation) is not another writer: ours is written as it is
    await syncs.setAnnotation(ns, 'rv', 'packagesync.io/reconcile-requested-at', 'now');
    const shrunk = await syncs.writeStatus(late as PackageSync, { inventory: { entries: [entry('b')] } });
    expect(shrunk?.status?.inventory?.entries.map((e) => e.id)).toEqual([entry('b').id]);
    expect(shrunk?.metadata.annotations?.['packagesync.io/reconcile-requested-at']).toBe('now');
  });
});

describe('a hanging git server', () => {
  let hang: Server;
  const sockets = new Set<Socket>();
  let controller: ControllerHandle;

  beforeAll(async () => {
    hang = createServer((s) => sockets.add(s));
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', () => r()));
    controller = await startController({ args: ['--concurrency', '2', '--git-timeout', '90s'] });
  });

  afterAll(async () => {
    await controller?.stop('SIGKILL'); // a graceful stop would wait out the hanging fetch
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => hang?.close(() => r()));
  });

  it('holds one reconcile slot: the others are applied meanwhile', async () => {
    const ns = await fx.namespace('slow');
    const hangingUrl = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/stuck.git`;
    await createPackageSync(packageSync(ns, 'stuck', controller.shard, { source: { url: hangingUrl } }));
    await eventually('the hanging fetch to start', async () => sockets.size > 0);
    const names = ['one', 'two', 'three', 'four'];
    for (const name of names) {
      const { url } = await fx.repo(`slow-${name}`, { 'cm.yaml': configMap(name, { k: 'v' }) });
      await createPackageSync(packageSync(ns, name, controller.shard, { source: { url } }));
    }
    // all four go through the one free slot while the stuck fetch still holds the other (its deadline: 90 s)
    for (const name of names) await waitReady(ns, name, () => true, 60_000);
    expect([...sockets].some((s) => !s.destroyed)).toBe(true);
    const stuck = await getPackageSync(ns, 'stuck');
    expect(ready(stuck)?.reason).not.toBe('SourceTimeout');
    expect(stuck?.status?.lastAppliedRevision).toBeUndefined();
    expect((await (await kube()).request<{ data: Record<string, string> }>('GET', cmPath(ns, 'four'))).data).toEqual({
      k: 'v',
    });
  });
});
