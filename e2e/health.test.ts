/**
 * Health that explains itself, end to end: a real controller, a real git server, the real control plane,
 * and Pods that fail on purpose (hack/kwok-stages/pod-failures.yaml). Every test names its spec.timeout;
 * the ones that must fail fast show it by finishing far inside it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles } from '../test/support/git/index.ts';
import { eventually, kubectl } from './support/cluster.ts';
import { getPackageSync, patchPackageSync } from './support/controller.ts';
import {
  condition,
  configMap,
  deployment,
  gadgetCRD,
  job,
  notReadyGadget,
  readyAt,
  stalledOnHealth,
  watchStatus,
} from './support/health.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';

let env: GitEnvWithController;
beforeAll(async () => {
  env = await startGitEnv();
});
afterAll(async () => {
  await env?.dispose();
});

const stalledMessage = (ps: Parameters<typeof condition>[0]) => condition(ps, 'Stalled')?.message ?? '';

describe.concurrent('waiting for health', () => {
  it('is Ready once a Deployment is Available, and counts the objects', async () => {
    const ns = await env.namespace('e2e-health-ok');
    const { url, sha } = await env.repo('ok', {
      'web.yaml': deployment('web', { replicas: 2 }),
      'cm.yaml': configMap('c'),
    });
    await env.sync(ns, 'ok', { source: { url }, timeout: '20s' });
    // the window is generous: a loaded 2-core machine can take tens of seconds to start the first reconcile
    const { seen, last } = await watchStatus(ns, 'ok', readyAt(sha), 90_000);
    expect(last.status?.objects).toEqual({
      total: 2,
      current: 2,
      inProgress: 0,
      failed: 0,
      terminating: 0,
      unknown: 0,
    });
    expect(last.status?.history?.[0]).toMatchObject({ revision: `main@sha1:${sha}`, result: 'Succeeded', created: 2 });
    expect(last.status?.history?.[0]?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // while applying and waiting, Reconciling said so ("waiting for health" only once the wait outlasts a
    // second: engine/health-step.ts; the slow cases below see it)
    expect(seen.some((ps) => condition(ps, 'Reconciling')?.status === 'True')).toBe(true);
    expect(condition(last, 'Reconciling')).toBeUndefined();
  });

  it('without wait, counts every object of the package, not only those the last apply changed', async () => {
    const ns = await env.namespace('e2e-health-nowait');
    const { repo, url } = await env.repo('nowait', { 'a.yaml': configMap('a'), 'b.yaml': configMap('b') });
    await env.sync(ns, 'nw', { source: { url }, wait: false });
    await watchStatus(ns, 'nw', readyAt());
    const sha = await commitFiles(repo, 'main', { 'b.yaml': configMap('b').replace('k: v', 'k: w') }, 'change b');
    await patchPackageSync(ns, 'nw', { metadata: { annotations: { 'packagesync.io/reconcile-requested-at': '1' } } });
    const { last } = await watchStatus(ns, 'nw', readyAt(sha));
    expect(last.status?.history?.[0]).toMatchObject({ configured: 1, created: 0 });
    expect(last.status?.objects).toMatchObject({ total: 2, current: 2 }); // was 1: only the applied object
  });

  it('fails fast on ImagePullBackOff, naming the Pod and the reason', async () => {
    const ns = await env.namespace('e2e-health-pull');
    const { url } = await env.repo('pull', { 'web.yaml': deployment('web', { failure: 'ImagePullBackOff' }) });
    await env.sync(ns, 'pull', { source: { url }, timeout: '120s' });
    const { last } = await watchStatus(ns, 'pull', stalledOnHealth, 100_000);
    // fails fast: the message says 'health check failed', not 'timeout' (no wall-clock bound: a loaded machine
    // stretches it; the reason is what tells a failed Pod from the 120s timeout)
    expect(condition(last, 'Ready')).toMatchObject({ status: 'False', reason: 'HealthCheckFailed' });
    expect(stalledMessage(last)).toMatch(
      new RegExp(
        `^health check failed: Deployment/${ns}/web \\(.*Pod web-[a-z0-9]+-[a-z0-9]+: (ErrImagePull|ImagePullBackOff): `,
      ),
    );
    expect(last.status?.objects).toMatchObject({ total: 1, failed: 1 });
  });

  it('fails fast on a crash loop, well before the timeout', async () => {
    const ns = await env.namespace('e2e-health-crash');
    const { url } = await env.repo('crash', { 'web.yaml': deployment('web', { failure: 'CrashLoopBackOff' }) });
    await env.sync(ns, 'crash', { source: { url }, timeout: '120s' });
    const { last } = await watchStatus(ns, 'crash', stalledOnHealth, 100_000);
    expect(stalledMessage(last)).toMatch(
      /Pod web-[a-z0-9]+-[a-z0-9]+: CrashLoopBackOff: restarted \d+ times, last exit code 1 \(Error\)/,
    );
  });

  it('waits for a Job to complete', async () => {
    const ns = await env.namespace('e2e-health-job');
    const { url, sha } = await env.repo('job', { 'job.yaml': job('migrate') });
    await env.sync(ns, 'job', { source: { url }, timeout: '120s' });
    const { last } = await watchStatus(ns, 'job', readyAt(sha), 100_000);
    expect(last.status?.objects).toMatchObject({ total: 1, current: 1 });
  });

  it('fails fast when a Job fails, with the Job controller reason', async () => {
    const ns = await env.namespace('e2e-health-jobfail');
    const { url } = await env.repo('jobfail', { 'job.yaml': job('migrate', { failure: 'Error' }) });
    await env.sync(ns, 'jobfail', { source: { url }, timeout: '120s' });
    const { last } = await watchStatus(ns, 'jobfail', stalledOnHealth, 100_000);
    expect(stalledMessage(last)).toMatch(
      new RegExp(`^health check failed: Job/${ns}/migrate \\(BackoffLimitExceeded: `),
    );
  });

  it('names a custom resource whose Ready stays False when the wait times out', async () => {
    const ns = await env.namespace('e2e-health-cr');
    const group = `${ns}.example.com`;
    const { url } = await env.repo('cr', {
      'crd.yaml': gadgetCRD(group),
      'gadget.yaml': notReadyGadget(group, 'g1', 'backend 10.0.0.7:5432 refused the connection'),
      'cm.yaml': configMap('c'),
    });
    const started = Date.now();
    // retryInterval: a custom resource applied right after its CRD can still meet UnknownKind while the API
    // server's discovery lags the CRD's Established condition (an apply race, not what this test is about)
    await env.sync(ns, 'cr', { source: { url }, timeout: '8s', retryInterval: '1s' });
    const { seen, last } = await watchStatus(ns, 'cr', stalledOnHealth, 30_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(8_000);
    const gadget = `Gadget.${group}/${ns}/g1`;
    // while waiting: how many are in progress, and the first by name
    expect(seen.map((ps) => condition(ps, 'Reconciling')?.message ?? '')).toContainEqual(
      expect.stringContaining(`waiting for health: 1 object in progress: ${gadget} (backend 10.0.0.7:5432 refused`),
    );
    // the object named first is located in the package, as every failure about an object is
    expect(stalledMessage(last)).toBe(
      `timeout waiting for health: 1 object not Current: ${gadget} (backend 10.0.0.7:5432 refused the connection) (from gadget.yaml:1)`,
    );
    expect(last.status?.objects).toMatchObject({ total: 3, current: 2, inProgress: 1 });
    // the CRD is cluster-scoped: leave nothing behind
    await patchPackageSync(ns, 'cr', { spec: { suspend: true } });
    await kubectl('delete', 'crd', `gadgets.${group}`, '--wait=false');
  });

  it('names every unhealthy object and its cause at the timeout', async () => {
    const ns = await env.namespace('e2e-health-many');
    const { url } = await env.repo('many', {
      'a.yaml': deployment('slow', { failure: 'NotReady' }),
      'b.yaml': deployment('nowhere', { unschedulable: true }),
      'c.yaml': deployment('fine'),
    });
    await env.sync(ns, 'many', { source: { url }, timeout: '8s' });
    const { last } = await watchStatus(ns, 'many', stalledOnHealth, 30_000);
    const message = stalledMessage(last);
    expect(message).toMatch(/^timeout waiting for health: [23] objects not Current: /);
    expect(message).toMatch(new RegExp(`Deployment/${ns}/slow \\(.*Pod slow-[a-z0-9-]+: ContainersNotReady: `));
    expect(message).toMatch(
      new RegExp(`Deployment/${ns}/nowhere \\(.*Pod nowhere-[a-z0-9-]+: Unschedulable: 0/1 nodes`),
    );
    expect(message).not.toContain('fine');
  });
});

describe.concurrent('a newer revision cancels the wait', () => {
  it('a new commit, found by interval polling, starts over at once', async () => {
    const ns = await env.namespace('e2e-health-commit');
    const { repo, url } = await env.repo('commit', { 'web.yaml': deployment('web', { failure: 'NotReady' }) });
    await env.sync(ns, 'commit', { source: { url }, timeout: '180s', interval: '2s' });
    await watchStatus(ns, 'commit', (ps) => /waiting for health/.test(condition(ps, 'Reconciling')?.message ?? ''));
    const fixed = await commitFiles(repo, 'main', { 'web.yaml': deployment('web') }, 'fix readiness');
    const { seen, last } = await watchStatus(ns, 'commit', readyAt(fixed), 150_000);
    // the old revision's wait was dropped, not failed
    expect(seen.some((ps) => condition(ps, 'Stalled'))).toBe(false);
    expect(last.status?.history?.map((h) => h.result)).toEqual(['Succeeded']);
  });

  it('the trigger annotation starts over at once', async () => {
    const ns = await env.namespace('e2e-health-trigger');
    const { repo, url } = await env.repo('trigger', { 'web.yaml': deployment('web', { failure: 'NotReady' }) });
    await env.sync(ns, 'trigger', { source: { url }, timeout: '180s', interval: '1h' });
    await watchStatus(ns, 'trigger', (ps) => /waiting for health/.test(condition(ps, 'Reconciling')?.message ?? ''));
    const fixed = await commitFiles(repo, 'main', { 'web.yaml': deployment('web') }, 'fix readiness');
    await patchPackageSync(ns, 'trigger', {
      metadata: { annotations: { 'packagesync.io/reconcile-requested-at': 'fixed' } },
    });
    const { seen } = await watchStatus(ns, 'trigger', readyAt(fixed), 150_000);
    expect(seen.some((ps) => condition(ps, 'Stalled'))).toBe(false);
  });

  it('deleting the PackageSync stops the wait and prunes at once', async () => {
    const ns = await env.namespace('e2e-health-delete');
    const { url } = await env.repo('delete', { 'web.yaml': deployment('web', { failure: 'NotReady' }) });
    await env.sync(ns, 'del', { source: { url }, timeout: '180s' });
    await watchStatus(ns, 'del', (ps) => /waiting for health/.test(condition(ps, 'Reconciling')?.message ?? ''));
    await kubectl('delete', 'pks', 'del', '-n', ns, '--wait=false');
    await eventually('PackageSync gone', async () => (await getPackageSync(ns, 'del')) === undefined, {
      timeoutMs: 150_000,
    });
    await eventually('Deployment pruned', async () => {
      const list = await kubectl('get', 'deployments', '-n', ns, '-o', 'name');
      return list.trim() === '';
    });
  });
});
