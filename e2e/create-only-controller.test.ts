/**
 * The running controller's side of docs/adr/0029, counted by its own request metric: once one unit's ConfigMaps
 * are watched (its drift watch holds the owned ConfigMap watch), a second, brand-new unit's ConfigMaps cost no
 * GET (before: one per object, each answering 404), and an unowned object that unit names is still adopted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kube } from './support/cluster.ts';
import { createPackageSync, httpBase, metricSum, packageSync, SERVE_METRICS, waitReady } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import type { KubeObject } from '../src/core/object.ts';

let env: GitEnvWithController;
let base: string;

beforeAll(async () => {
  env = await startGitEnv({
    args: SERVE_METRICS,
  });
  base = await httpBase(env.controller);
});

afterAll(async () => {
  await env?.dispose();
});

/** The controller's own requests of one verb and HTTP status so far (every resource's series summed). */
const requests = (verb: string, code: string) => metricSum(base, 'packagesync_api_requests_total', { verb, code });

describe('a new unit in a watched namespace', () => {
  it('reads none of its new objects; an unowned one is adopted through the refused create', async () => {
    const ns = await env.namespace('e2e-create-only-ctl');
    const shard = env.controller.shard;
    const first = await env.repo('first', { 'a.yaml': configMap('first-a', { k: '1' }) });
    await createPackageSync(packageSync(ns, 'first', shard, { source: { url: first.url }, interval: '1h' }));
    await waitReady(ns, 'first');

    const admin = await kube();
    await admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      query: { fieldManager: 'legacy-tool' },
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'legacy' }, data: { k: 'old' } },
    });
    const second = await env.repo('second', {
      'b.yaml': configMap('second-b', { k: '1' }),
      'c.yaml': configMap('second-c', { k: '1' }),
      'legacy.yaml': configMap('legacy', { k: 'new' }),
    });
    const gets404 = await requests('GET', '404');
    const refused = await requests('PATCH', '409');
    await createPackageSync(packageSync(ns, 'second', shard, { source: { url: second.url }, interval: '1h' }));
    await waitReady(ns, 'second');

    // before: a GET per new object, two of them answering 404; now: none, and one refused create (the unowned one)
    expect((await requests('GET', '404')) - gets404).toBe(0);
    expect((await requests('PATCH', '409')) - refused).toBe(1);
    const legacy = await admin.request<KubeObject>('GET', `/api/v1/namespaces/${ns}/configmaps/legacy`);
    expect(legacy.data).toEqual({ k: 'new' });
    expect(legacy.metadata.labels?.['packagesync.io/name']).toBe('second');
  });
});
