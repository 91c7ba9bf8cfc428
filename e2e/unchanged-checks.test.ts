/**
 * Settled packages' periodic checks on the real control plane (docs/adr/0031): a check that finds nothing changed
 * since the last one found the package settled stops before rendering and writes nothing; anything the
 * checkpoint sums up that changes makes the next check a full one: a postBuild variable, and a status change of
 * an object (which the drift watch ignores) that its health rule reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conditionOf } from '../src/core/status.ts';
import { eventually, kube } from './support/cluster.ts';
import { getPackageSync, httpBase, metricSum, SERVE_METRICS, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { gadgetCRD } from './support/health.ts';
import { cmPath, configMap, get } from './support/safety.ts';

let env: GitEnvWithController;
let base: string;

beforeAll(async () => {
  env = await startGitEnv({
    args: SERVE_METRICS,
  });
  base = await httpBase(env.controller);
}, 600_000);
afterAll(async () => {
  await env?.dispose();
});

/** packagesync_unchanged_checks_total: where the checks stopped (before-load, before-render) or all of them. */
const unchangedChecks = (stopped?: 'before-load' | 'before-render') =>
  metricSum(base, 'packagesync_unchanged_checks_total', stopped ? { stopped } : {});

/**
 * Checks of this PackageSync that stopped before rendering (the controller's debug log); with `beforeLoading`,
 * only those that stopped before even loading it.
 */
const skipped = (ns: string, name: string, beforeLoading = false) =>
  env.controller.logs.filter(
    (l) =>
      l.includes(beforeLoading ? 'render and plan skipped, before loading' : 'render and plan skipped') &&
      l.includes(`"namespace":"${ns}"`) &&
      l.includes(`"name":"${name}"`),
  ).length;

async function moreUnchangedChecks(ns: string, name: string, n: number, beforeLoading = false): Promise<void> {
  const before = skipped(ns, name, beforeLoading);
  await eventually(
    `${n} more checks of ${name} stopped before ${beforeLoading ? 'loading' : 'rendering'}`,
    async () => skipped(ns, name, beforeLoading) - before >= n,
    {
      timeoutMs: 60_000,
    },
  );
}

describe('periodic checks of a settled package', () => {
  it('stop before rendering and write nothing while nothing changed; a changed variable is applied', async () => {
    const ns = await env.namespace('e2e-unchanged');
    await (
      await kube()
    ).request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { metadata: { name: 'vars' }, data: { COLOR: 'blue' } },
    });
    const { url } = await env.repo('unchanged', {
      'paint.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: paint}\ndata: {color: "${COLOR}"}\n',
    });
    await env.syncReady(ns, 'paint', {
      source: { url },
      targetNamespace: ns,
      interval: '2s',
      postBuild: { substituteFrom: [{ kind: 'ConfigMap', name: 'vars' }] },
    });
    expect((await get(cmPath(ns, 'paint')))?.data).toEqual({ color: 'blue' });

    // the first periodic check finds the package settled and remembers its checkpoint; the next ones stop early,
    // before even loading the PackageSync (its resourceVersion, the ref and the variables compared first)
    const counted = await unchangedChecks('before-load');
    // (a check that stopped before rendering instead, the one after a status write, is not what is counted here)
    await moreUnchangedChecks(ns, 'paint', 2, true);
    expect(await unchangedChecks('before-load')).toBeGreaterThanOrEqual(counted + 2);
    const settled = (await getPackageSync(ns, 'paint'))!;
    const object = (await get(cmPath(ns, 'paint')))!;
    await moreUnchangedChecks(ns, 'paint', 2);
    expect((await getPackageSync(ns, 'paint'))!.metadata.resourceVersion).toBe(settled.metadata.resourceVersion);
    expect((await get(cmPath(ns, 'paint')))!.metadata.resourceVersion).toBe(object.metadata.resourceVersion);

    // a variable is part of the checkpoint: the check after its change renders and applies it
    await (
      await kube()
    ).request('PATCH', `/api/v1/namespaces/${ns}/configmaps/vars`, {
      contentType: 'application/merge-patch+json',
      body: { data: { COLOR: 'green' } },
    });
    await eventually('the new value applied', async () => (await get(cmPath(ns, 'paint')))?.data?.color === 'green', {
      timeoutMs: 60_000,
    });
  });

  it('a Helm package stops early too; a changed valuesFrom value reaches the next check (docs/adr/0037)', async () => {
    const ns = await env.namespace('e2e-unchanged-helm');
    await (
      await kube()
    ).request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { metadata: { name: 'chart-values' }, data: { 'values.yaml': 'color: blue\n' } },
    });
    const { url } = await env.repo('unchanged-helm', {
      'chart/Chart.yaml': 'apiVersion: v2\nname: paint\nversion: 0.1.0\n',
      'chart/values.yaml': 'color: red\n',
      'chart/templates/cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: helm-paint}\ndata: {color: {{ .Values.color | quote }}}\n',
    });
    await env.syncReady(ns, 'helm-paint', {
      source: { url, path: 'chart' },
      targetNamespace: ns,
      interval: '2s',
      helm: { valuesFrom: [{ kind: 'ConfigMap', name: 'chart-values' }] },
    });
    expect((await get(cmPath(ns, 'helm-paint')))?.data).toEqual({ color: 'blue' });
    // valuesFrom and the capabilities are in the Inputs digest: the periodic checks of a settled chart stop early
    await moreUnchangedChecks(ns, 'helm-paint', 2);
    const object = (await get(cmPath(ns, 'helm-paint')))!;
    await moreUnchangedChecks(ns, 'helm-paint', 2);
    expect((await get(cmPath(ns, 'helm-paint')))!.metadata.resourceVersion).toBe(object.metadata.resourceVersion);

    // a valuesFrom value changes only that input: no shortcut serves the old values
    await (
      await kube()
    ).request('PATCH', `/api/v1/namespaces/${ns}/configmaps/chart-values`, {
      contentType: 'application/merge-patch+json',
      body: { data: { 'values.yaml': 'color: green\n' } },
    });
    await eventually(
      'the new value applied',
      async () => (await get(cmPath(ns, 'helm-paint')))?.data?.color === 'green',
      { timeoutMs: 60_000 },
    );
  });

  it('a new commit on the ref and a deleted credentials Secret reach the next check', async () => {
    const ns = await env.namespace('e2e-unchanged-source');
    await (
      await kube()
    ).request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: { metadata: { name: 'creds' }, stringData: { username: 'git', password: 'not-checked-here' } },
    });
    const repo = await env.repo('unchanged-source', {
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shade}\ndata: {shade: light}\n',
    });
    await env.syncReady(ns, 'shade', {
      source: { url: repo.url, secretRef: { name: 'creds' } },
      targetNamespace: ns,
      interval: '2s',
      retryInterval: '1s',
    });
    await moreUnchangedChecks(ns, 'shade', 2);

    // the ref moved: the commit it names is compared before loading, so the next periodic check applies it
    const dark = await env.commit(repo.repo, {
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shade}\ndata: {shade: dark}\n',
    });
    await eventually('the new commit applied', async () => (await get(cmPath(ns, 'shade')))?.data?.shade === 'dark', {
      timeoutMs: 60_000,
    });
    // Ready at the new commit: Ready alone already held from the first commit (a commit moves no generation), and
    // the object is applied before its run's final status write
    await waitReady(ns, 'shade', (ps) => ps.status?.lastAppliedRevision?.endsWith(dark) === true);
    await moreUnchangedChecks(ns, 'shade', 2);

    // the Secret is read as the full check reads it: once gone, the next check says so
    await (await kube()).request('DELETE', `/api/v1/namespaces/${ns}/secrets/creds`);
    await waitCondition(ns, 'shade', 'Ready', 'False', 'AuthSecretNotFound');
  });

  it('a dependency that is no longer Ready reaches the next check of its dependent', async () => {
    const ns = await env.namespace('e2e-unchanged-deps');
    const base = await env.repo('unchanged-base', {
      'cm.yaml': configMap('base', { a: '1' }),
    });
    const app = await env.repo('unchanged-app', {
      'cm.yaml': configMap('app', { a: '1' }),
    });
    const every = { targetNamespace: ns, interval: '2s', retryInterval: '1s' };
    await env.syncReady(ns, 'base', { source: { url: base.url }, ...every });
    await env.syncReady(ns, 'app', { source: { url: app.url }, dependsOn: [{ name: 'base' }], ...every });
    await moreUnchangedChecks(ns, 'app', 2);

    await env.commit(base.repo, { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: base\n' });
    await waitCondition(ns, 'app', 'Ready', 'False', 'DependencyNotReady');
  });

  it('a status change the drift watch ignores still reaches health at the next check', async () => {
    const ns = await env.namespace('e2e-unchanged-health');
    const group = `${ns}.example.com`;
    const { url } = await env.repo('unchanged-health', {
      'crd.yaml': gadgetCRD(group, { statusSubresource: true }),
      'gadget.yaml': `apiVersion: ${group}/v1\nkind: Gadget\nmetadata: {name: w1}\nspec: {size: 1}\n`,
    });
    await env.sync(ns, 'gadgets', {
      source: { url },
      targetNamespace: ns,
      interval: '2s',
      retryInterval: '1s',
      timeout: '120s',
      healthCheckExprs: [
        {
          apiVersion: `${group}/v1`,
          kind: 'Gadget',
          current: "has(status.phase) && status.phase == 'Running'",
          failed: "has(status.phase) && status.phase == 'Broken'",
        },
      ],
    });
    // the Gadget's own controller (this test) reports it running
    const gadget = `/apis/${group}/v1/namespaces/${ns}/gadgets/w1`;
    const setPhase = async (phase: string) =>
      (await kube()).request('PATCH', `${gadget}/status`, {
        query: { fieldManager: 'gadget-controller' },
        contentType: 'application/merge-patch+json',
        body: { status: { phase } },
      });
    await eventually('the Gadget exists', async () => (await get(gadget)) !== undefined, { timeoutMs: 60_000 });
    await setPhase('Running');
    await waitReady(ns, 'gadgets');
    await moreUnchangedChecks(ns, 'gadgets', 2);

    await setPhase('Broken');
    await eventually(
      'Ready=False naming the broken Gadget',
      async () => {
        const ready = conditionOf((await getPackageSync(ns, 'gadgets'))?.status, 'Ready');
        return ready?.status === 'False' && (ready.message ?? '').includes('w1');
      },
      { timeoutMs: 60_000 },
    );
  });
});
