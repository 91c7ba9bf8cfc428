/**
 * What a Prometheus scrape of a running controller shows: a real controller process, a real git server,
 * the real control plane. One PackageSync that applies and prunes, one that fails; then /metrics,
 * /healthz and /readyz as a scraper and the kubelet see them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, get, kube } from './support/cluster.ts';
import { createPackageSync, httpBase, packageSync, SERVE_METRICS, waitReady } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';
import { ready, trigger } from './support/safety.ts';
import { getPackageSync } from './support/controller.ts';

let env: GitEnv;
let base: string;

beforeAll(async () => {
  // the suite's controllers run without HTTP servers ('0'); this one listens on any free loopback port
  env = await startGitEnv({
    args: SERVE_METRICS,
  });
  base = await httpBase(env.controller!);
});

afterAll(async () => {
  await env?.dispose();
});

/** One sample's value: `name{a="b",…} value`, labels given as a subset to match. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const set = line.slice(name.length).match(/^\{(.*)\}/)?.[1] ?? '';
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) return Number(line.split(' ').pop());
  }
  return undefined;
}

const scrape = async () => {
  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
};

describe('a running controller, scraped', () => {
  it('counts reconciles, objects, git fetches and API requests, and exports each condition', async () => {
    const ns = await env.namespace('e2e-metrics');
    const shard = env.controller!.shard;
    const { repo, url } = await env.repo('metrics', {
      'a.yaml': configMap('a', { k: '1' }),
      'b.yaml': configMap('b', { k: '1' }),
      'c.yaml': configMap('c', { k: '1' }),
    });
    await createPackageSync(packageSync(ns, 'good', shard, { source: { url }, interval: '1h', wait: false }));
    await createPackageSync(
      packageSync(ns, 'bad', shard, { source: { url, path: 'no/such/dir' }, interval: '1h', retryInterval: '1h' }),
    );
    await waitReady(ns, 'good');
    await eventually(
      'bad fails with PathNotFound',
      async () => ready(await getPackageSync(ns, 'bad'))?.reason === 'PathNotFound',
    );
    // b leaves the package: one prune
    await env.commit(repo, { 'b.yaml': null });
    await trigger(ns, 'good');
    await eventually('b is pruned', async () =>
      (await getPackageSync(ns, 'good'))?.status?.inventory?.entries.length === 2 ? true : undefined,
    );

    // good's Ready=True and its second success waited for too, not read once: packagesync_condition mirrors the
    // controller's watch, which may not have brought back good's last status write yet (its "Applying revision"
    // write said Ready=Unknown), the prune is counted before that write and the reconcile only after its answer
    const text = await eventually('the scrape shows both PackageSyncs and the prune', async () => {
      const t = await scrape();
      const pruned = sample(t, 'packagesync_objects_pruned_total') ?? 0;
      const failedReady = sample(t, 'packagesync_condition', {
        name: 'bad',
        namespace: ns,
        type: 'Ready',
        status: 'False',
      });
      const goodReady = sample(t, 'packagesync_condition', {
        name: 'good',
        namespace: ns,
        type: 'Ready',
        status: 'True',
      });
      const succeeded = sample(t, 'packagesync_reconcile_total', { result: 'success' }) ?? 0;
      return pruned >= 1 && failedReady === 1 && goodReady === 1 && succeeded >= 2 ? t : undefined;
    });

    // reconciles by result, and their duration
    expect(sample(text, 'packagesync_reconcile_total', { result: 'success' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'packagesync_reconcile_total', { result: 'failure' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'packagesync_reconcile_duration_seconds_count')).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/^# TYPE packagesync_reconcile_duration_seconds histogram$/m);
    // the queue
    expect(sample(text, 'packagesync_queue_depth')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'packagesync_reconciles_in_flight')).toBeGreaterThanOrEqual(0);
    // objects: 3 created, 1 pruned
    expect(sample(text, 'packagesync_objects_applied_total')).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'packagesync_objects_pruned_total')).toBeGreaterThanOrEqual(1);
    // git
    expect(sample(text, 'packagesync_git_fetch_duration_seconds_count')).toBeGreaterThanOrEqual(3);
    // API requests by verb and code, with latency
    expect(sample(text, 'packagesync_api_requests_total', { verb: 'PATCH', code: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'packagesync_api_requests_total', { verb: 'GET', code: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'packagesync_api_request_duration_seconds_count', { verb: 'PATCH' })).toBeGreaterThanOrEqual(1);
    // … and by resource: the applies and the prune were to ConfigMaps, discovery is no resource
    expect(
      sample(text, 'packagesync_api_requests_total', { verb: 'PATCH', resource: 'configmaps' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'packagesync_api_requests_total', { verb: 'DELETE', resource: 'configmaps' }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'packagesync_api_requests_total', { verb: 'GET', resource: '' })).toBeGreaterThanOrEqual(1);
    // one series per condition status, 1 for the current one (as Flux's gotk_reconcile_condition)
    const cond = (name: string, type: string, status: string) =>
      sample(text, 'packagesync_condition', { name, namespace: ns, type, status });
    expect(cond('good', 'Ready', 'True')).toBe(1);
    expect(cond('good', 'Ready', 'False')).toBe(0);
    expect(cond('bad', 'Ready', 'False')).toBe(1);
    expect(cond('bad', 'Ready', 'True')).toBe(0);
    // process metrics from prom-client's defaults
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    // nothing secret-shaped, no file content
    expect(text).not.toMatch(/k: "1"|password|token=/i);
  });

  it('counts objects put back after someone removed or changed them in the cluster (drift)', async () => {
    const ns = await env.namespace('e2e-metrics-drift');
    const { url } = await env.repo('drift', { 'a.yaml': configMap('a', { k: '1' }) });
    await createPackageSync(packageSync(ns, 'ps', env.controller!.shard, { source: { url }, interval: '1h' }));
    await waitReady(ns, 'ps');
    const before = sample(await scrape(), 'packagesync_drift_corrected_objects_total') ?? 0;
    // someone deletes an object the package owns (e2e/drift.test.ts has edits of fields the package sets)
    await (await kube()).request('DELETE', `/api/v1/namespaces/${ns}/configmaps/a`);
    await trigger(ns, 'ps');
    await eventually('the edit is put back and counted as drift', async () => {
      const drifted = sample(await scrape(), 'packagesync_drift_corrected_objects_total') ?? 0;
      const cm = await get(`/api/v1/namespaces/${ns}/configmaps/a`);
      return drifted === before + 1 && cm?.data?.k === '1';
    });
  });

  it('answers the probes', async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });
});
