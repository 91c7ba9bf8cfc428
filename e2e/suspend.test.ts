/**
 * A suspended PackageSync says so: a Suspended condition and `kubectl get pks`'s SUSPENDED column, while the
 * last reconcile's conditions stay; nothing is applied while suspended; resuming drops the condition and
 * applies what changed meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conditionOf } from '../src/core/status.ts';
import { kubectl } from './support/cluster.ts';
import { createPackageSync, getPackageSync, packageSync, patchPackageSync, waitReady } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';
import { cmPath, get, sleep } from './support/safety.ts';

let env: GitEnv;
beforeAll(async () => {
  env = await startGitEnv();
});
afterAll(async () => {
  await env?.dispose();
});

describe('suspend', () => {
  it('shows Suspended in a condition and in kubectl get pks, applies nothing, and resumes', async () => {
    const ns = await env.namespace('e2e-suspend');
    const { repo, url } = await env.repo('suspend', { 'cm.yaml': configMap('a', { k: 'v1' }) });
    await createPackageSync(packageSync(ns, 'ps', env.controller!.shard, { source: { url }, interval: '1s' }));
    await waitReady(ns, 'ps');

    await patchPackageSync(ns, 'ps', { spec: { suspend: true } });
    const suspended = await waitFor(ns, (s) => conditionOf(s, 'Suspended')?.status === 'True');
    expect(conditionOf(suspended.status, 'Suspended')).toMatchObject({ reason: 'Suspended' });
    expect(conditionOf(suspended.status, 'Ready')).toMatchObject({ status: 'True' }); // the objects are as they were
    const table = await kubectl('get', 'pks', 'ps', '-n', ns);
    const [header, row] = table.trim().split('\n');
    const column = header!.split(/\s{2,}/).indexOf('SUSPENDED');
    expect(row!.split(/\s{2,}/)[column]).toBe('true');

    const sha = await env.commit(repo, { 'cm.yaml': configMap('a', { k: 'v2' }) });
    await sleep(3_000); // three intervals: nothing may be applied while suspended
    expect((await get(cmPath(ns, 'a')))?.data).toEqual({ k: 'v1' });

    await patchPackageSync(ns, 'ps', { spec: { suspend: false } });
    const resumed = await waitReady(ns, 'ps', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    expect(conditionOf(resumed.status, 'Suspended')).toBeUndefined();
    expect((await get(cmPath(ns, 'a')))?.data).toEqual({ k: 'v2' });
  });
});

async function waitFor(ns: string, check: (s: Parameters<typeof conditionOf>[0]) => boolean) {
  for (let i = 0; i < 300; i++) {
    const ps = await getPackageSync(ns, 'ps');
    if (ps && check(ps.status)) return ps;
    await sleep(200);
  }
  throw new Error(
    `PackageSync ${ns}/ps: condition not reached; last ${JSON.stringify((await getPackageSync(ns, 'ps'))?.status)}`,
  );
}
