/**
 * deploy/finalizer-policy.yaml (docs/adr/0051): the API server gives a new PackageSync the controller's finalizer
 * when it is created, so its first sync writes status twice (Reconciling with the inventory before applying,
 * then Ready) and nothing else of its own; without the policy the controller adds the finalizer itself, one
 * write more. What kstatus readers and `kubectl describe` see is the same either way, and the finalizer the
 * policy added still holds the PackageSync until its objects are torn down.
 *
 * The test installs the shipped policy under its own name, bound only to the namespaces it labels, so other test
 * files on the cluster keep a controller-added finalizer.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { FINALIZER, type PackageSync } from '../src/api/packagesync.ts';
import { packageSyncCollectionPath } from '../src/adapters/kube/packagesyncs.ts';
import { conditionOf } from '../src/core/status.ts';
import type { KubeObject } from '../src/core/object.ts';
import { eventually, get, kube, kubectl, uniqueName } from './support/cluster.ts';
import { getPackageSync, httpBase, metricSum, packageSync, SERVE_METRICS, waitReady } from './support/controller.ts';
import { configMap, quickSpec, startGitEnv, type GitEnvWithController } from './support/git-env.ts';

const root = resolve(import.meta.dirname, '..');
const LABEL = 'e2e.packagesync.io/finalizer-policy';
const id = uniqueName('fp');
let env: GitEnvWithController;
let base: string;

const PLURAL: Record<string, string> = {
  MutatingAdmissionPolicy: 'mutatingadmissionpolicies',
  MutatingAdmissionPolicyBinding: 'mutatingadmissionpolicybindings',
};
const policyPath = (o: KubeObject) => `/apis/admissionregistration.k8s.io/v1/${PLURAL[o.kind]}/${o.metadata.name}`;

/** The shipped policy and binding, renamed for this file and bound to namespaces labelled with its id. */
function testPolicy(): KubeObject[] {
  const docs = parseAllDocuments(readFileSync(resolve(root, 'deploy/finalizer-policy.yaml'), 'utf8')).map(
    (d) => d.toJS() as KubeObject & { spec: Record<string, unknown> },
  );
  return docs.map((d) => {
    const renamed = { ...d, metadata: { ...d.metadata, name: `packagesync-finalizer-${id}` } };
    if (d.kind !== 'MutatingAdmissionPolicyBinding') return renamed;
    return {
      ...renamed,
      spec: {
        ...d.spec,
        policyName: `packagesync-finalizer-${id}`,
        matchResources: { namespaceSelector: { matchLabels: { [LABEL]: id } } },
      },
    };
  });
}

async function namespace(prefix: string, withPolicy: boolean): Promise<string> {
  const ns = await env.namespace(prefix);
  if (withPolicy) {
    await (
      await kube()
    ).request('PATCH', `/api/v1/namespaces/${ns}`, {
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { [LABEL]: id } } },
    });
  }
  return ns;
}

/** The controller's own status and finalizer writes of PackageSyncs (the metric does not tell them apart). */
const packageSyncPatches = () =>
  metricSum(base, 'packagesync_api_requests_total', { verb: 'PATCH', code: '200', resource: 'packagesyncs' });

/**
 * The count once it holds still: the controller counts a write when its answer arrives, which may be a moment
 * after the test read the Ready it wrote.
 */
async function settledPatches(): Promise<number> {
  let last = await packageSyncPatches();
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const now = await packageSyncPatches();
    if (now === last) return now;
    last = now;
  }
}

beforeAll(async () => {
  env = await startGitEnv({ args: SERVE_METRICS });
  base = await httpBase(env.controller);
  const client = await kube();
  for (const o of testPolicy()) {
    await client.request('PATCH', policyPath(o), {
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'e2e-finalizer-policy', force: 'true' },
      body: o,
    });
  }
  // the API server's policy informers take a moment: a dry-run create says when the policy acts
  const probe = await namespace('e2e-fpolicy-probe', true);
  await eventually(
    'the finalizer policy acts on creates',
    async () => {
      const dry = await client.request<PackageSync>('POST', packageSyncCollectionPath(probe), {
        query: { dryRun: 'All' },
        body: packageSync(probe, 'probe', 'nobody', quickSpec('http://127.0.0.1:1/none.git')),
      });
      return dry.metadata.finalizers?.includes(FINALIZER) ?? false;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}, 600_000);

afterAll(async () => {
  await env?.dispose();
  const client = await kube();
  for (const o of testPolicy().reverse()) {
    await client.request('DELETE', policyPath(o)).catch(() => undefined);
  }
});

describe('the finalizer given at creation', () => {
  it('saves the first sync one write, and kstatus readers and kubectl describe see the same', async () => {
    const { url, sha } = await env.repo('fp-app', { 'cm.yaml': configMap('settings', { a: '1' }) });
    // one after the other, so each count is one first sync's
    const counts: Record<string, number> = {};
    for (const withPolicy of [true, false]) {
      const ns = await namespace(withPolicy ? 'e2e-fpolicy-on' : 'e2e-fpolicy-off', withPolicy);
      const before = await packageSyncPatches();
      const created = await env.sync(ns, 'app', quickSpec(url));
      // the policy's work is in the create's answer, before any controller saw it
      expect(created.metadata.finalizers?.includes(FINALIZER) ?? false).toBe(withPolicy);
      const ready = await waitReady(ns, 'app');
      counts[withPolicy ? 'policy' : 'controller'] = (await settledPatches()) - before;
      expect(ready.metadata.finalizers).toEqual([FINALIZER]);
      expect(ready.status?.observedGeneration).toBe(ready.metadata.generation);
      expect(conditionOf(ready.status, 'Ready')).toMatchObject({
        status: 'True',
        message: `Applied revision main@sha1:${sha}: 1 created`,
      });
      expect(conditionOf(ready.status, 'Reconciling')).toBeUndefined();
      expect(ready.status?.inventory?.entries.map((e) => e.id)).toEqual([`${ns}_settings__ConfigMap`]);
      const described = await kubectl('describe', 'pks', 'app', '-n', ns);
      expect(described).toMatch(/Normal\s+Applied\s+.*Revision main@sha1:[0-9a-f]{40}: 1 created/);
    }
    // Reconciling with the inventory before applying, then Ready: the finalizer patch is the one write saved
    expect(counts).toEqual({ policy: 2, controller: 3 });
  });

  it('holds the PackageSync until its objects are torn down, as the controller-added one does', async () => {
    const ns = await namespace('e2e-fpolicy-delete', true);
    const { url } = await env.repo('fp-delete', { 'cm.yaml': configMap('doomed', { a: '1' }) });
    await env.sync(ns, 'app', { ...quickSpec(url), prune: true });
    await waitReady(ns, 'app');
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/doomed`)).toBeDefined();
    await (await kube()).request('DELETE', `${packageSyncCollectionPath(ns)}/app`);
    await eventually('the PackageSync is gone', async () => (await getPackageSync(ns, 'app')) === undefined);
    // the controller pruned before it released the finalizer
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/doomed`)).toBeUndefined();
  });
});
