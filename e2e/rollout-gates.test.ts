/**
 * PackageSyncSet gates on the real control plane (issue 31, docs/adr/0042): a Job gate runs one Job per wave and
 * revision through the real job controller (kwok completes or fails its Pod) and passes or fails the wave; a
 * deny window keeps every wave from starting and says which window and until when; a metric gate queries a real
 * Prometheus scraping this controller's own /metrics, holds the rollout while the threshold is missed, and a
 * person resumes it (recorded with who). Each test has its own namespaces.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageSync } from '../src/api/packagesync.ts';
import type { PackageSyncSet } from '../src/api/packagesyncset.ts';
import { startPrometheus, type TestPrometheus } from '../test/support/prometheus.ts';
import { eventually, kube, kubeconfig } from './support/cluster.ts';
import { packagesync } from './support/cli.ts';
import { httpBase, SERVE_METRICS, SHARD_LABEL } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnvWithController } from './support/git-env.ts';

let fx: GitEnvWithController;
let prometheus: TestPrometheus;

beforeAll(async () => {
  fx = await startGitEnv({ args: SERVE_METRICS });
});

afterAll(async () => {
  await prometheus?.stop();
  await fx?.dispose();
});

const setsPath = (ns: string) => `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncsets`;

async function clusterSecret(ns: string, name: string) {
  await (
    await kube()
  ).request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: {
      metadata: { name, labels: { 'packagesync.io/secret-type': 'cluster' } },
      stringData: { value: readFileSync(kubeconfig(), 'utf8') },
    },
  });
}

async function createSet(ns: string, url: string, rollout: Record<string, unknown>, directories = ['dir-a', 'dir-b']) {
  await (
    await kube()
  ).request('POST', setsPath(ns), {
    body: {
      apiVersion: 'packagesync.io/v1alpha1',
      kind: 'PackageSyncSet',
      metadata: { name: 'web', labels: { [SHARD_LABEL]: fx.controller.shard } },
      spec: {
        template: { spec: { source: { url, ref: { branch: 'main' } }, interval: '3s', targetNamespace: ns } },
        generators: { clusters: {}, directories },
        rollout,
      },
    },
  });
}

async function patchSet(ns: string, body: Record<string, unknown>) {
  await (await kube()).request('PATCH', `${setsPath(ns)}/web`, { contentType: 'application/merge-patch+json', body });
}

const getSet = async (ns: string) => (await kube()).request<PackageSyncSet>('GET', `${setsPath(ns)}/web`);

async function waitPhase(ns: string, what: string, ok: (s: PackageSyncSet) => boolean, timeoutMs = 90_000) {
  return eventually(
    what,
    async () => {
      const s = await getSet(ns);
      return ok(s) && s;
    },
    { timeoutMs },
  );
}

async function jobs(ns: string) {
  return (
    await (
      await kube()
    ).request<{
      items: { metadata: { name: string; annotations?: Record<string, string> } }[];
    }>('GET', `/apis/batch/v1/namespaces/${ns}/jobs`, { query: { labelSelector: 'packagesync.io/set=web' } })
  ).items;
}

const jobGate = (podLabels: Record<string, string> = {}) => ({
  name: 'smoke',
  job: {
    timeout: '2m',
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels: podLabels },
        spec: { restartPolicy: 'Never', containers: [{ name: 'check', image: 'registry.test/smoke:1' }] },
      },
    },
  },
});

describe('PackageSyncSet: a Job gate', () => {
  it('passes when its Job succeeds (one Job per wave and revision); a failed Job fails the wave and reverts it', async () => {
    const ns = await fx.namespace('gates-job');
    const {
      repo,
      url,
      sha: good,
    } = await fx.repo('gates-job', {
      'dir-a/cm.yaml': configMap('a', { v: '1' }),
      'dir-b/cm.yaml': configMap('b', { v: '1' }),
    });
    await clusterSecret(ns, 'local');
    await createSet(ns, url, { waves: [{ name: 'one', targets: { count: 1 }, gates: [jobGate()] }, { name: 'two' }] });
    const done = await waitPhase(ns, 'the good revision through both waves', (s) => s.status?.phase === 'Succeeded');
    expect(done.status!.waves![0]!.gatesPassed).toEqual(['smoke']);
    const first = await jobs(ns);
    expect(first.map((j) => j.metadata.annotations?.['packagesync.io/revision'])).toEqual([`main@sha1:${good}`]);
    expect(first[0]!.metadata.name).toMatch(/^web-one-smoke-[0-9a-f]{10}$/);

    // the gate's Pod now exits 1 (kwok's Error stage): the Job fails with BackoffLimitExceeded
    await patchSet(ns, {
      spec: {
        rollout: {
          waves: [
            { name: 'one', targets: { count: 1 }, gates: [jobGate({ 'e2e.packagesync.io/pod-failure': 'Error' })] },
            { name: 'two' },
          ],
        },
      },
    });
    const bad = await fx.commit(repo, { 'dir-a/cm.yaml': configMap('a', { v: '2' }) });
    const reverted = await waitPhase(
      ns,
      'the revision reverted by the failed Job',
      (s) => s.status?.phase === 'Reverted',
    );
    expect(reverted.status!.failedRevision).toBe(`main@sha1:${bad}`);
    expect(reverted.status!.blockedBy).toMatchObject({ wave: 'one', reason: 'GateFailed' });
    expect(reverted.status!.message).toMatch(
      /gate smoke failed: Job web-one-smoke-[0-9a-f]{10} failed \(BackoffLimitExceeded\)/,
    );
    // one Job for each revision, none started twice
    expect((await jobs(ns)).map((j) => j.metadata.annotations?.['packagesync.io/revision']).sort()).toEqual(
      [`main@sha1:${bad}`, `main@sha1:${good}`].sort(),
    );
    await eventually('every child back on the good commit', async () => {
      const list = await (
        await kube()
      ).request<{ items: PackageSync[] }>('GET', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs`);
      return list.items.length === 2 && list.items.every((c) => c.spec.source.ref?.commit === good);
    });
  });
});

describe('PackageSyncSet: time windows', () => {
  it('no wave starts inside a deny window; status names it and when it ends; without it the rollout goes on', async () => {
    const ns = await fx.namespace('gates-window');
    const { url } = await fx.repo('gates-window', { 'dir-a/cm.yaml': configMap('a', { v: '1' }) });
    await clusterSecret(ns, 'local');
    // opens every minute for two: always in force
    const freeze = { name: 'freeze', kind: 'deny', schedule: '* * * * *', duration: '2m' };
    await createSet(ns, url, { windows: [freeze], waves: [{ name: 'one' }] }, ['dir-a']);
    const blocked = await waitPhase(ns, 'the wave kept by the freeze', (s) => s.status?.blockedBy?.gate === 'freeze');
    expect(blocked.status!.blockedBy).toMatchObject({ wave: 'one', reason: 'DenyWindowActive' });
    expect(blocked.status!.blockedBy!.message).toContain('deny window freeze (* * * * * for 2m, UTC) is in force');
    expect(blocked.status!.phase).toBe('Progressing');
    const list = await (
      await kube()
    ).request<{ items: unknown[] }>('GET', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs`);
    expect(list.items).toEqual([]);
    await patchSet(ns, { spec: { rollout: { windows: [] } } });
    await waitPhase(ns, 'the rollout after the freeze was lifted', (s) => s.status?.phase === 'Succeeded');
  });
});

describe('PackageSyncSet: a metric gate on a real Prometheus', () => {
  // built from its module on first use (cold: long; hack/build-cluster.sh prometheus)
  beforeAll(async () => {
    prometheus = await startPrometheus([new URL(await httpBase(fx.controller)).host]);
  }, 1_800_000);

  it('holds while the query misses its threshold; a person resumes it, recorded with who', async () => {
    const ns = await fx.namespace('gates-metric');
    const { url, sha } = await fx.repo('gates-metric', {
      'dir-a/cm.yaml': configMap('a', { v: '1' }),
      'dir-b/cm.yaml': configMap('b', { v: '1' }),
    });
    await clusterSecret(ns, 'local');
    // this controller's own metrics, scraped by Prometheus: how many of this namespace's PackageSyncs are Ready
    const query = `sum(packagesync_condition{namespace="${ns}",type="Ready",status="True"})`;
    const gate = (threshold: number) => ({
      name: 'ready-children',
      metric: { address: prometheus.url, query, operator: '>=', threshold, timeout: '20s' },
    });
    const waves = (threshold: number) => [{ name: 'one', gates: [gate(threshold)] }];
    await createSet(ns, url, { onFailure: 'hold', waves: waves(99) });
    const held = await waitPhase(ns, 'the rollout held by the metric gate', (s) => s.status?.phase === 'Holding');
    expect(held.status!.blockedBy).toMatchObject({ wave: 'one', reason: 'GateFailed' });
    // the numbers Prometheus answered, never its body or address
    expect(held.status!.message).toMatch(/gate ready-children failed for 20s: 1 of 1 sample\(s\) not >= 99: [0-9]+/);
    expect(held.status!.message).not.toContain(prometheus.url);
    expect(held.status!.message).toContain(`annotate packagesync.io/resume=one@${sha}`);
    // `packagesync why` names the blocking gate, why, and what to do
    const why = await packagesync('why', 'packagesyncset/web', '-n', ns);
    expect(why.code).toBe(1);
    expect(why.stdout).toContain(`PackageSyncSet ${ns}/web: Holding on main@sha1:${sha}`);
    expect(why.stdout).toMatch(/blocked by gate ready-children of wave one since .*: GateFailed: /);
    expect(why.stdout).toContain(`packagesync.io/resume=one@${sha}`);

    // the threshold corrected, then a person resumes the held wave
    await patchSet(ns, { spec: { rollout: { waves: waves(2) } } });
    await patchSet(ns, { metadata: { annotations: { 'packagesync.io/resume': `one@${sha}:carol` } } });
    const done = await waitPhase(ns, 'the resumed rollout through its gate', (s) => s.status?.phase === 'Succeeded');
    expect(done.status!.waves![0]).toMatchObject({ resumedBy: 'carol', attempt: 1, gatesPassed: ['ready-children'] });
    expect(done.status!.lastHandledResume).toBe(`one@${sha}:carol`);
    expect(done.status!.lastGoodRevision).toBe(`main@sha1:${sha}`);
  });
});
