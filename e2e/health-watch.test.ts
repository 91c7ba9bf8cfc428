/**
 * The shared watches behind the health wait (src/adapters/kube/watch-cache.ts) against the real API
 * server: one watch per kind however many PackageSyncs hold it, stopped when the last lets go; one watch
 * per namespace when RBAC forbids a cluster-wide one; a watch RBAC refuses stopped and remembered, not retried; and a PackageSync that impersonates a ServiceAccount
 * waits on LISTs made as that ServiceAccount, not on the controller's watches.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../src/adapters/kube/client.ts';
import { Discovery } from '../src/adapters/kube/discovery.ts';
import { WatchCache } from '../src/adapters/kube/watch-cache.ts';
import { eventually, kube, kubectl } from './support/cluster.ts';
import { deployment, stalledOnHealth, watchStatus } from './support/health.ts';
import { sleep } from './support/safety.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';

let env: GitEnvWithController;
const tmp = mkdtempSync(join(tmpdir(), 'psync-watch-'));
beforeAll(async () => {
  env = await startGitEnv();
});
afterAll(async () => {
  await env?.dispose();
  rmSync(tmp, { recursive: true, force: true });
});

const labelled = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels: { 'packagesync.io/name': 'p', 'packagesync.io/namespace': 'x' } },
  data: { k: 'v' },
});

describe('WatchCache', () => {
  it('shares one watch per kind between holders, wakes them on events, and stops it after the last', async () => {
    const ns = await env.namespace('e2e-watch-share');
    const client = await kube();
    const cache = new WatchCache(client, new Discovery(client), { lingerMs: 0 });
    try {
      const want = { group: '', kind: 'ConfigMap', namespace: ns, objects: 'owned' as const };
      const [a] = await cache.hold('ns/a#objects', [want]);
      const [b] = await cache.hold('ns/b#objects', [want]);
      expect(a).toBe(b);
      expect(cache.active()).toEqual([a]); // admin may watch cluster-wide: one watch for every namespace
      await cache.synced([a], 10_000);

      const woken: string[] = [];
      const unsubscribe = cache.subscribe((key) => woken.push(key));
      await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: labelled('one') });
      await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        body: { ...labelled('unlabelled'), metadata: { name: 'unlabelled' } },
      });
      await eventually('the event', async () => woken.includes(a!));
      const read = cache.read(a!, ns);
      expect(read.synced && read.items.map((o) => [o.kind, o.apiVersion, o.metadata.name])).toEqual([
        ['ConfigMap', 'v1', 'one'],
      ]);
      unsubscribe();

      cache.release('ns/a#objects');
      expect(cache.active()).toEqual([a]);
      await cache.hold('ns/b#objects', []); // b needs nothing any more: same as a release
      expect(cache.active()).toEqual([]);

      // stopped (a remote cluster's Secret changed: its clients close), a wait still holding it starts no watch
      // on the closed client: its keys are undefined, so it reads directly
      cache.stop();
      expect(await cache.hold('ns/a#objects', [want])).toEqual([undefined]);
      expect(cache.active()).toEqual([]);
    } finally {
      cache.stop();
    }
  });

  it('watches per namespace when RBAC allows no cluster-wide watch', async () => {
    const ns = await env.namespace('e2e-watch-rbac');
    const client = await kube();
    await kubectl('create', 'serviceaccount', 'reader', '-n', ns);
    await kubectl('create', 'role', 'reader', '-n', ns, '--verb=get,list,watch', '--resource=configmaps');
    await kubectl('create', 'rolebinding', 'reader', '-n', ns, '--role=reader', `--serviceaccount=${ns}:reader`);
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: labelled('one') });
    const limited = await KubeClient.create({ kubeconfig: await tokenKubeconfig(ns, 'reader') });
    const cache = new WatchCache(limited, new Discovery(client), { lingerMs: 0 });
    try {
      const [key] = await cache.hold('h', [{ group: '', kind: 'ConfigMap', namespace: ns, objects: 'owned' }]);
      expect(key).toContain(`|${ns}|owned`);
      await cache.synced([key], 10_000);
      const read = cache.read(key!, ns);
      expect(read.synced && read.items.map((o) => o.metadata.name)).toEqual(['one']);
    } finally {
      cache.stop();
      await limited.close();
    }
  });
});

describe('a watch RBAC refuses (issue 16: it was retried with back-off forever)', () => {
  /** A ServiceAccount that may watch ConfigMaps in `ns` but not Secrets; its client counts refused requests. */
  async function limitedCache(ns: string, retryMs: number, recheckMinMs: number) {
    await kubectl('create', 'serviceaccount', 'reader', '-n', ns);
    await kubectl('create', 'role', 'reader', '-n', ns, '--verb=get,list,watch', '--resource=configmaps');
    await kubectl('create', 'rolebinding', 'reader', '-n', ns, '--role=reader', `--serviceaccount=${ns}:reader`);
    const refused = { count: 0 };
    const warnings: unknown[] = [];
    const limited = await KubeClient.create({
      kubeconfig: await tokenKubeconfig(ns, 'reader'),
      onRequest: (_verb, status) => void (status === 403 && refused.count++),
    });
    const log = { warn: (o: unknown) => warnings.push(o), info: () => undefined, debug: () => undefined };
    const cache = new WatchCache(limited, new Discovery(await kube()), {
      lingerMs: 0,
      log: log as unknown as Logger,
      refusalTimes: { retryMs, recheckMinMs },
    });
    const want = { group: '', kind: 'Secret', namespace: ns, objects: 'owned' as const };
    return { cache, limited, refused, warnings, want };
  }
  const grantSecrets = async (ns: string) => {
    await kubectl('create', 'role', 'secrets', '-n', ns, '--verb=list,watch', '--resource=secrets');
    await kubectl('create', 'rolebinding', 'secrets', '-n', ns, '--role=secrets', `--serviceaccount=${ns}:reader`);
  };

  it('stops at the first 403, is logged once and remembered across holds, and is not retried', async () => {
    const ns = await env.namespace('e2e-watch-refused');
    const { cache, limited, refused, warnings, want } = await limitedCache(ns, 3_600_000, 3_600_000);
    try {
      const [key] = await cache.hold('a', [want]);
      await cache.synced([key], 60_000); // a refused watch settles: the health wait does not sit out its timeout
      expect(cache.refused()).toEqual([key]);
      expect(cache.read(key!, ns)).toEqual({ synced: false }); // readers fall back to direct reads
      await cache.hold('a', [want], { recheckRefused: true }); // too soon to re-ask
      cache.release('a');
      await cache.hold('b', [want]); // a new holder, the watch restarted: still remembered
      await sleep(3_000); // the old back-off would have asked four more times by now
      expect(refused.count).toBe(1);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ kind: 'Secret', namespace: ns });
    } finally {
      cache.stop();
      await limited.close();
    }
  });

  it('is asked again once its refusal lapses, or on an inventory change, and then watches', async () => {
    const ns = await env.namespace('e2e-watch-regrant');
    const lapses = await limitedCache(ns, 1_000, 3_600_000);
    const ns2 = await env.namespace('e2e-watch-recheck');
    const recheck = await limitedCache(ns2, 3_600_000, 0);
    try {
      const [k1] = await lapses.cache.hold('a', [lapses.want]);
      const [k2] = await recheck.cache.hold('a', [recheck.want]);
      await lapses.cache.synced([k1], 60_000);
      await recheck.cache.synced([k2], 60_000);
      expect([lapses.cache.refused(), recheck.cache.refused()]).toEqual([[k1], [k2]]);
      await grantSecrets(ns);
      await grantSecrets(ns2);
      await eventually('the lapsed refusal asked again, and allowed', async () => {
        await lapses.cache.synced([k1], 10_000);
        return lapses.cache.read(k1!, ns).synced;
      });
      await eventually('an inventory change asks again, and is allowed', async () => {
        await recheck.cache.hold('a', [recheck.want], { recheckRefused: true });
        await recheck.cache.synced([k2], 10_000);
        return recheck.cache.read(k2!, ns2).synced;
      });
      expect([lapses.cache.refused(), recheck.cache.refused()]).toEqual([[], []]);
    } finally {
      for (const c of [lapses, recheck]) {
        c.cache.stop();
        await c.limited.close();
      }
    }
  });
});

describe('a PackageSync that impersonates a ServiceAccount', () => {
  it('waits with LISTs as that ServiceAccount, and still names the Pod', async () => {
    const ns = await env.namespace('e2e-watch-sa');
    await kubectl('create', 'serviceaccount', 'deployer', '-n', ns);
    await kubectl(
      'create',
      'role',
      'deployer',
      '-n',
      ns,
      '--verb=get,list,watch,create,update,patch,delete',
      '--resource=deployments.apps,replicasets.apps,pods',
    );
    await kubectl('create', 'rolebinding', 'deployer', '-n', ns, '--role=deployer', `--serviceaccount=${ns}:deployer`);
    const { url } = await env.repo('sa', { 'web.yaml': deployment('web', { failure: 'NotReady' }) });
    await env.sync(ns, 'sa', { source: { url }, timeout: '6s', serviceAccountName: 'deployer' });
    const { last } = await watchStatus(ns, 'sa', stalledOnHealth, 30_000);
    expect(last.status?.conditions?.find((c) => c.type === 'Stalled')?.message).toMatch(
      new RegExp(`Deployment/${ns}/web \\(.*Pod web-[a-z0-9-]+: ContainersNotReady: `),
    );
    // the controller's shared watches were not used for it: none was started in its namespace
    expect(env.controller.logs.filter((l) => l.includes('watch started') && l.includes(ns))).toEqual([]);
  });
});

/** A kubeconfig that authenticates as a ServiceAccount, with a short-lived token from the TokenRequest API. */
async function tokenKubeconfig(namespace: string, sa: string): Promise<string> {
  const client = await kube();
  const req = await client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${sa}/token`,
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } } },
  );
  const admin = (await kube()).config;
  const path = join(tmp, `${namespace}-${sa}.kubeconfig`);
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'c', cluster: { server: admin.server, 'certificate-authority-data': admin.ca?.toString('base64') } },
      ],
      users: [{ name: 'u', user: { token: req.status.token } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'c',
    }),
  );
  return path;
}
