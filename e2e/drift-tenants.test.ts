/**
 * Self-heal for tenants (issue 16, docs/drift.md): the controller runs with deploy/'s RBAC (as in its pod), and a
 * PackageSync applies as a tenant's ServiceAccount. The drift watches are held as the controller (a trigger only;
 * the reconcile reads and writes as the ServiceAccount):
 * - a kind the controller may watch (a ConfigMap: deploy/'s applier role) is corrected within seconds, with an
 *   interval of 1h;
 * - a kind it may not (a custom resource the tenant's Role grants, deploy/ does not) is refused once by the API
 *   server, logged once, and not asked again (no retry storm: the controller's API request counter says how
 *   often it was refused); the interval still corrects it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kube, kubectl, uniqueName } from './support/cluster.ts';
import {
  createPackageSync,
  getPackageSync,
  httpBase,
  metricSum,
  packageSync,
  SERVE_METRICS,
  type ControllerHandle,
  waitReady,
} from './support/controller.ts';
import { applyDeployRbac, tokenKubeconfig, type DeployRbac } from './support/deploy-rbac.ts';
import { startGitEnv, type GitEnv } from './support/git-env.ts';
import { gadgetCRD } from './support/health.ts';
import { waitEstablished } from '../test/support/crd-established.ts';
import { cmPath, configMap, get, sleep } from './support/safety.ts';

let env: GitEnv;
let controller: ControllerHandle;
let tmp: string;
let rbac: DeployRbac | undefined;
let base: string;
const group = `${uniqueName('dt')}.e2e.packagesync.io`;

beforeAll(async () => {
  env = await startGitEnv(false);
  tmp = await mkdtemp(join(tmpdir(), 'psync-drift-tenants-'));
  const systemNs = await env.namespace('e2e-dt-system');
  rbac = await applyDeployRbac(systemNs, tmp);
  await writeFile(join(tmp, 'crd.yaml'), gadgetCRD(group));
  await kubectl('apply', '-f', join(tmp, 'crd.yaml'));
  await waitEstablished(kubectl, `gadgets.${group}`);
  controller = await env.startController({
    kubeconfig: await tokenKubeconfig(systemNs, join(tmp, 'kubeconfig')),
    args: SERVE_METRICS,
  });
  base = await httpBase(controller);
}, 600_000);

afterAll(async () => {
  await env?.dispose(); // the controller first
  await kubectl('delete', '--ignore-not-found', `crd/gadgets.${group}`).catch(() => undefined);
  await rbac?.dispose();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** A namespace with a ServiceAccount `deployer` that may edit what is in it, Gadgets included. */
async function tenantNamespace(prefix: string): Promise<string> {
  const ns = await env.namespace(prefix);
  const admin = await kube();
  const rbacPath = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
  await admin.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { metadata: { name: 'deployer' } } });
  await admin.request('POST', `${rbacPath}/roles`, {
    body: { metadata: { name: 'gadgets' }, rules: [{ apiGroups: [group], resources: ['gadgets'], verbs: ['*'] }] },
  });
  for (const [name, kind] of [
    ['edit', 'ClusterRole'],
    ['gadgets', 'Role'],
  ] as const)
    await admin.request('POST', `${rbacPath}/rolebindings`, {
      body: {
        metadata: { name: `deployer-${name}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
        subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }],
      },
    });
  return ns;
}

/** Someone else's change: a merge patch as another field manager (what `kubectl edit` sends). */
async function editAs(manager: string, path: string, body: unknown): Promise<void> {
  await (
    await kube()
  ).request('PATCH', path, { query: { fieldManager: manager }, contentType: 'application/merge-patch+json', body });
}

/**
 * The controller's API requests the server refused (403), from its own client counter. Nothing else this
 * controller does is refused (e2e/rbac.test.ts: deploy/'s RBAC is enough), so these are the Gadget watch's
 * LISTs and WATCHes. (The apiserver's apiserver_request_total does not count requests its authorizer denied.)
 */
async function refusedRequests(): Promise<number> {
  const refused = (verb: string) => metricSum(base, 'packagesync_api_requests_total', { verb, code: '403' });
  return (await refused('GET')) + (await refused('WATCH'));
}

describe.concurrent('self-heal for a PackageSync acting as a ServiceAccount', () => {
  it('an edit of a kind the controller may watch is reverted within seconds (interval 1h)', async () => {
    const ns = await tenantNamespace('e2e-dt-watched');
    const { url } = await env.repo('dt-watched', { 'cm.yaml': configMap('settings', { color: 'blue' }) });
    await createPackageSync(
      packageSync(ns, 'ps', controller.shard, {
        source: { url },
        serviceAccountName: 'deployer',
        interval: '1h', // nothing below may wait for the interval
        retryInterval: '1s',
        timeout: '1m',
      }),
    );
    await waitReady(ns, 'ps');

    await editAs('kubectl-edit', cmPath(ns, 'settings'), { data: { color: 'red' } });
    await eventually('the edit reverted, with no interval due', async () => {
      return (await get(cmPath(ns, 'settings')))?.data?.color === 'blue';
    });
    const ps = await eventually('status names the correction', async () => {
      const p = await getPackageSync(ns, 'ps');
      return (p?.status?.lastDriftCorrection?.objects.length ?? 0) > 0 && p;
    });
    expect(ps.status?.lastDriftCorrection?.objects).toEqual([
      { object: `ConfigMap/${ns}/settings`, paths: ['/data/color'], managers: ['kubectl-edit'] },
    ]);
  });

  it('a kind the controller may not watch: refused once, logged once, no retries; the interval corrects it', async () => {
    const ns = await tenantNamespace('e2e-dt-refused');
    const gadget = `apiVersion: ${group}/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {size: 1}\n`;
    const { url } = await env.repo('dt-refused', { 'gadget.yaml': gadget });
    const before = await refusedRequests();
    await createPackageSync(
      packageSync(ns, 'ps', controller.shard, {
        source: { url },
        serviceAccountName: 'deployer',
        interval: '15s',
        retryInterval: '1s',
        timeout: '1m',
      }),
    );
    await waitReady(ns, 'ps');
    const refusal = (l: string) => l.includes('not allowed to watch') && l.includes(`"namespace":"${ns}"`);
    await eventually('the refusal logged', async () => controller.logs.some(refusal));

    const path = `/apis/${group}/v1/namespaces/${ns}/gadgets/g`;
    await editAs('kubectl-edit', path, { spec: { size: 5 } });
    await eventually('the edit reverted at the interval', async () => (await get(path))?.spec?.size === 1, {
      timeoutMs: 90_000,
    });
    // Before the fix the informer retried a 403 with back-off up to 30 s, forever: by now it would have asked
    // about eight times in this window alone (0.25 s, 0.5 s, 1 s, ... 16 s, 30 s).
    await sleep(20_000);
    const refused = (await refusedRequests()) - before;
    expect(refused).toBeGreaterThanOrEqual(1); // asked, as the controller, and told no
    expect(refused).toBeLessThanOrEqual(2);
    expect(controller.logs.filter(refusal)).toHaveLength(1);
    expect(controller.logs.filter((l) => l.includes('watch interrupted') && l.includes(group))).toEqual([]);
  }, 180_000);
});
