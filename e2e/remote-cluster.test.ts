/**
 * spec.kubeConfig.secretRef against a second real control plane (hack/cluster.sh on its own ports and
 * directory, started here and stopped in teardown): objects, prune, health and deletion happen in cluster 2,
 * status and events stay in cluster 1; a kubeconfig that would run a program or read the controller's disk is
 * refused; an unreachable cluster is a clear condition with nothing pruned; `packagesync why` and `plan` read cluster 2.
 */
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify, parse } from 'yaml';
import { KubeClient, isNotFound } from '../src/adapters/kube/client.ts';
import { Reason } from '../src/api/reasons.ts';
import type { PlanDocument } from '../src/core/plan/plan-render.ts';
import { packagesync } from './support/cli.ts';
import { eventually, eventReasons, get, kube } from './support/cluster.ts';
import { getPackageSync, patchPackageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { deployment as failingDeployment, stalledOnHealth, watchStatus } from './support/health.ts';
import { startPrivateCluster, type PrivateCluster } from './support/private-cluster.ts';
import { cmPath, configMap, deployment, inventoryIds, trigger } from './support/safety.ts';

let fx: GitEnvWithController;
let second: PrivateCluster;
let remote: KubeClient;
/** The second cluster's admin kubeconfig (inline certificates), as a Secret's value. */
let kubeconfigText: string;

beforeAll(async () => {
  // SECOND_APISERVER_PORT, SECOND_CLUSTER_DIR, … pin it; unset: free ports and a temporary directory
  [fx, second] = await Promise.all([startGitEnv(), startPrivateCluster({ envPrefix: 'SECOND_' })]);
  kubeconfigText = readFileSync(second.kubeconfig, 'utf8');
  remote = await KubeClient.create({ kubeconfig: second.kubeconfig });
});

afterAll(async () => {
  await fx?.dispose();
  await remote?.close();
  await second?.down();
});

async function remoteGet(path: string) {
  try {
    return await remote.request<{ data?: Record<string, string>; metadata: { labels?: Record<string, string> } }>(
      'GET',
      path,
    );
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

async function remoteNamespace(name: string) {
  await remote.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } });
}

async function kubeconfigSecret(ns: string, name: string, value: string, key = 'value') {
  const client = await kube();
  const body = { metadata: { name }, stringData: { [key]: value } };
  try {
    await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body });
  } catch {
    await client.request('PUT', `/api/v1/namespaces/${ns}/secrets/${name}`, { body });
  }
}

/** The GET and LIST requests cluster 2's API server answered for these resources so far (its /metrics). */
async function readsServed(resources: string[]): Promise<number> {
  const text = await second.kubectl('get', '--raw', '/metrics');
  let n = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1];
    const resource = /resource="([a-z]+)"/.exec(line)?.[1];
    if ((verb === 'GET' || verb === 'LIST') && resource && resources.includes(resource))
      n += Number(line.split(' ').pop());
  }
  return n;
}

/** Watches of this resource open on cluster 2's API server now (its controller-manager's among them). */
async function watchesOpen(resource: string): Promise<number> {
  const text = await second.kubectl('get', '--raw', '/metrics');
  let n = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('apiserver_longrunning_requests{') && line.includes('verb="WATCH"'))
      if (line.includes(`resource="${resource}"`)) n += Number(line.split(' ').pop());
  return n;
}

describe('spec.kubeConfig: a PackageSync in cluster 1 acting in cluster 2', () => {
  it('applies into cluster 2 only, keeps status and inventory in cluster 1, prunes and tears down there', async () => {
    const ns = await fx.namespace('remote');
    await remoteNamespace(ns);
    await kubeconfigSecret(ns, 'cluster-2', kubeconfigText);
    const { repo, url } = await fx.repo('remote-app', {
      'a.yaml': configMap('a', { k: 'v' }),
      'b.yaml': configMap('b', { k: 'v' }),
      'web.yaml': deployment('web', { replicas: 2 }),
    });
    const before = await readsServed(['configmaps', 'deployments', 'replicasets', 'pods']);
    const watchesBefore = await watchesOpen('deployments');
    const started = Date.now();
    const spec = {
      source: { url },
      interval: '1h',
      retryInterval: '2s',
      kubeConfig: { secretRef: { name: 'cluster-2' } },
    };
    await fx.sync(ns, 'app', spec);

    // Ready means the Deployment is Available in cluster 2: health was read there
    const ps = await waitReady(ns, 'app');
    const reads = (await readsServed(['configmaps', 'deployments', 'replicasets', 'pods'])) - before;
    console.log(`[measure] remote health: ${reads} GET/LIST in ${Date.now() - started} ms`);
    // the health wait watched cluster 2's Deployments (shared watches there, as the kubeconfig's identity, that
    // linger 30 s after the wait) rather than polling them with LISTs
    expect((await watchesOpen('deployments')) - watchesBefore).toBeGreaterThan(0);
    expect(inventoryIds(ps)).toEqual([`${ns}_a__ConfigMap`, `${ns}_b__ConfigMap`, `${ns}_web_apps_Deployment`]);
    expect(ps.status?.objects?.current).toBe(3);
    expect((await remoteGet(cmPath(ns, 'a')))?.data).toEqual({ k: 'v' });
    const web = await remote.request<{ status?: { availableReplicas?: number } }>(
      'GET',
      `/apis/apps/v1/namespaces/${ns}/deployments/web`,
    );
    expect(web.status?.availableReplicas).toBe(2);
    // nothing in cluster 1
    expect(await get(cmPath(ns, 'a'))).toBeUndefined();
    expect(await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`)).toBeUndefined();
    // events stay with the PackageSync, in cluster 1
    expect(await eventReasons(ns, 'app')).toContain('Applied');

    // prune happens in cluster 2
    await fx.commit(repo, { 'b.yaml': null });
    await trigger(ns, 'app');
    await waitReady(ns, 'app', (p) => !inventoryIds(p).includes(`${ns}_b__ConfigMap`));
    await eventually('b pruned in cluster 2', async () => (await remoteGet(cmPath(ns, 'b'))) === undefined);
    expect(await remoteGet(cmPath(ns, 'a'))).toBeDefined();

    // deletion: the finalizer prunes in cluster 2, then lets go in cluster 1
    await (await kube()).request('DELETE', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs/app`);
    await eventually('the PackageSync gone', async () => (await getPackageSync(ns, 'app')) === undefined);
    expect(await remoteGet(cmPath(ns, 'a'))).toBeUndefined();
    expect(await remoteGet(`/apis/apps/v1/namespaces/${ns}/deployments/web`)).toBeUndefined();
  });

  it('maps kinds with cluster 2’s discovery: a kind only cluster 2 serves is applied there', async () => {
    const ns = await fx.namespace('remote-crd');
    await remoteNamespace(ns);
    await kubeconfigSecret(ns, 'cluster-2', kubeconfigText);
    const group = `${ns}.e2e.packagesync.io`;
    await remote.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        metadata: { name: `widgets.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          ],
        },
      },
    });
    const widgets = `/apis/${group}/v1/namespaces/${ns}/widgets`;
    await eventually(
      'cluster 2 serves Widgets',
      async () =>
        await remote.request('GET', widgets).then(
          () => true,
          () => false,
        ),
    );
    const { url } = await fx.repo('remote-crd', {
      'w.yaml': `apiVersion: ${group}/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 3}\n`,
    });
    const spec = {
      source: { url },
      interval: '1h',
      retryInterval: '1s',
      kubeConfig: { secretRef: { name: 'cluster-2' } },
    };
    const ps = await fx.syncReady(ns, 'app', spec);
    expect(inventoryIds(ps)).toEqual([`${ns}_w_${group}_Widget`]);
    expect(await remoteGet(`${widgets}/w`)).toBeDefined();
    await remote
      .request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`)
      .catch(() => 0);
  });

  it('acts as spec.serviceAccountName in cluster 2: that cluster’s RBAC decides', async () => {
    const ns = await fx.namespace('remote-sa');
    await remoteNamespace(ns);
    await kubeconfigSecret(ns, 'cluster-2', kubeconfigText, 'value.yaml');
    const { url } = await fx.repo('remote-sa', { 'a.yaml': configMap('a', { k: 'v' }) });
    const spec = {
      source: { url },
      interval: '1h',
      retryInterval: '1s',
      serviceAccountName: 'deployer',
      kubeConfig: { secretRef: { name: 'cluster-2' } },
    };
    await fx.sync(ns, 'app', spec);
    const refused = await waitCondition(ns, 'app', 'Ready', 'False', Reason.Forbidden);
    expect(JSON.stringify(refused.status?.conditions)).toContain(`system:serviceaccount:${ns}:deployer`);
    expect(await remoteGet(cmPath(ns, 'a'))).toBeUndefined();

    // granted in cluster 2 (not in cluster 1): applied there
    const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
    const verbs = ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'];
    await remote.request('POST', `${rbac}/roles`, {
      body: { metadata: { name: 'deployer' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs }] },
    });
    await remote.request('POST', `${rbac}/rolebindings`, {
      body: {
        metadata: { name: 'deployer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
        subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }],
      },
    });
    await waitReady(ns, 'app');
    expect((await remoteGet(cmPath(ns, 'a')))?.data).toEqual({ k: 'v' });
  });

  it.each([
    [
      'an exec plugin',
      (kc: KubeconfigDoc) => (kc.users[0]!.user = { exec: { command: '/bin/sh', args: ['-c', 'id'] } }),
      'users[admin].exec',
    ],
    [
      'a token file',
      (kc: KubeconfigDoc) => (kc.users[0]!.user = { tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' }),
      'users[admin].tokenFile',
    ],
    [
      'a CA file',
      (kc: KubeconfigDoc) =>
        (kc.clusters[0]!.cluster = {
          server: kc.clusters[0]!.cluster.server,
          'certificate-authority': '/etc/ssl/certs/ca-certificates.crt',
        }),
      'clusters[packagesync-local].certificate-authority',
    ],
  ])(
    'refuses a kubeconfig naming %s: KubeConfigInvalid, nothing applied, no Secret content in status',
    async (_, edit, field) => {
      const ns = await fx.namespace('remote-refused');
      await remoteNamespace(ns);
      const kc = parse(kubeconfigText) as KubeconfigDoc;
      edit(kc);
      await kubeconfigSecret(ns, 'cluster-2', stringify(kc));
      const { url } = await fx.repo('remote-refused', { 'a.yaml': configMap('a', { k: 'v' }) });
      const spec = { source: { url }, interval: '1h', kubeConfig: { secretRef: { name: 'cluster-2' } } };
      await fx.sync(ns, 'app', spec);
      const ps = await waitCondition(ns, 'app', 'Ready', 'False', Reason.KubeConfigInvalid);
      const text = JSON.stringify(ps.status);
      expect(text).toContain(`Secret ${ns}/cluster-2 key value: ${field}`);
      expect(text).not.toMatch(/\/var\/run|\/etc\/ssl|\/bin\/sh|BEGIN|LS0t/);
      expect(await remoteGet(cmPath(ns, 'a'))).toBeUndefined();
      expect(await get(cmPath(ns, 'a'))).toBeUndefined();
    },
  );

  it('an unreachable cluster is RemoteClusterUnreachable: nothing pruned, the inventory stands; an edited Secret reconciles at once', async () => {
    const ns = await fx.namespace('remote-down');
    await remoteNamespace(ns);
    await kubeconfigSecret(ns, 'cluster-2', kubeconfigText);
    const { repo, url } = await fx.repo('remote-down', {
      'a.yaml': configMap('a', { k: 'v' }),
      'b.yaml': configMap('b', { k: 'v' }),
    });
    const spec = {
      source: { url },
      interval: '1h',
      retryInterval: '2s',
      kubeConfig: { secretRef: { name: 'cluster-2' } },
    };
    const applied = await fx.syncReady(ns, 'app', spec);

    // b leaves the package, and the kubeconfig now names a port nobody listens on: the Secret's edit alone
    // starts the reconcile (interval is 1h)
    await fx.commit(repo, { 'b.yaml': null });
    const dead = await freePort();
    const kc = parse(kubeconfigText) as KubeconfigDoc;
    kc.clusters[0]!.cluster.server = `https://127.0.0.1:${dead}`;
    await kubeconfigSecret(ns, 'cluster-2', stringify(kc));
    const down = await waitCondition(ns, 'app', 'Ready', 'False', Reason.RemoteClusterUnreachable);
    expect(JSON.stringify(down.status?.conditions)).toContain(`https://127.0.0.1:${dead}`);
    expect(inventoryIds(down)).toEqual(inventoryIds(applied));
    expect(down.status?.lastAppliedRevision).toBe(applied.status?.lastAppliedRevision);
    expect(await remoteGet(cmPath(ns, 'b'))).toBeDefined();

    // back: the next reconcile applies the new revision and prunes b there
    await kubeconfigSecret(ns, 'cluster-2', kubeconfigText);
    await trigger(ns, 'app'); // the commit: what ls-remote said a moment ago may still be cached
    await waitReady(ns, 'app', (p) => !inventoryIds(p).includes(`${ns}_b__ConfigMap`));
    expect(await remoteGet(cmPath(ns, 'b'))).toBeUndefined();
  });
});

// Issue 17: `packagesync why` and `plan` read cluster 1 for such a PackageSync (no workload found, everything "to
// create"); they now read the cluster its Secret names, as the controller does (src/cli/target-objects.ts).
describe('the CLI on a PackageSync with spec.kubeConfig reads cluster 2', () => {
  it('why follows the Pod in cluster 2; plan compares with cluster 2; a refused kubeconfig is a clear error', async () => {
    const ns = await fx.namespace('remote-cli');
    await remoteNamespace(ns);
    await kubeconfigSecret(ns, 'cluster-2', kubeconfigText);
    const { url } = await fx.repo('remote-cli', {
      'a.yaml': configMap('a', { k: 'v' }),
      'web.yaml': failingDeployment('web', { failure: 'ImagePullBackOff' }),
    });
    // no retry after the health failure, so the drift below stays for plan to see
    const spec = {
      source: { url },
      interval: '1h',
      retryInterval: '1h',
      timeout: '20s',
      kubeConfig: { secretRef: { name: 'cluster-2' } },
    };
    await fx.sync(ns, 'app', spec);
    await watchStatus(ns, 'app', stalledOnHealth, 100_000);

    const why = await packagesync('why', 'app', '-n', ns);
    expect(why.code).toBe(1);
    const lines = why.stdout.trim().split('\n');
    expect(lines[1]).toMatch(new RegExp(`^└ Deployment/${ns}/web  `));
    expect(lines[3]).toMatch(new RegExp(`^    └ Pod/${ns}/web-[a-z0-9]+-[a-z0-9]+  (ErrImagePull|ImagePullBackOff)`));

    const plan = async () => {
      const r = await packagesync('plan', 'app', '-n', ns, '--allow-insecure-http', '-o', 'json');
      if (!r.stdout) throw new Error(`plan printed nothing (exit ${r.code}): ${r.stderr}`);
      return { code: r.code, doc: JSON.parse(r.stdout) as PlanDocument };
    };
    const inSync = await plan(); // against cluster 1 both objects would be "create"
    expect(inSync.doc.actions.map((a) => [a.action, a.id])).toEqual([]);
    expect(inSync.code).toBe(0);
    await remote.request('PATCH', cmPath(ns, 'a'), {
      query: { fieldManager: 'kubectl-edit' },
      contentType: 'application/merge-patch+json',
      body: { data: { k: 'edited' } },
    });
    const drifted = await plan();
    // taken back, as the reconcile would (plan said `conflict`: its dry run did not force what Correct takes back)
    expect(drifted.doc.actions.map((a) => [a.action, a.id])).toEqual([['update', `ConfigMap/${ns}/a`]]);
    await patchPackageSync(ns, 'app', { spec: { driftPolicy: 'Detect' } });
    // Detect only reports drift (plan said `update`: it did not pass driftPolicy or spec.ignore to the planner)
    expect((await plan()).doc.actions).toEqual([]);

    // the controller's rules for the Secret hold for the CLI too: an exec plugin is refused, never run
    const kc = parse(kubeconfigText) as KubeconfigDoc;
    kc.users[0]!.user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '/bin/sh' } };
    await kubeconfigSecret(ns, 'cluster-2', stringify(kc));
    const refused = await packagesync('why', 'app', '-n', ns);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(Reason.KubeConfigInvalid);
    expect(refused.stderr).toContain(`Secret ${ns}/cluster-2`);
  });
});

interface KubeconfigDoc {
  clusters: { name: string; cluster: Record<string, unknown> & { server: string } }[];
  users: { name: string; user: Record<string, unknown> }[];
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
