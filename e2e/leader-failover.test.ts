/**
 * Leader election with two real controller processes on one shard: one reconciles, the other stands by
 * (and is ready, so a rollout never waits on it). kill -9 the leader — no release of the Lease — and the
 * standby takes over within the lease duration (15 s) plus one retry period, and applies the next commit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/cluster.ts';
import { createPackageSync, httpBase, packageSync, startController, waitReady } from './support/controller.ts';
import type { ControllerHandle } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';
import { get, trigger } from './support/safety.ts';

const LEASE_DURATION_MS = 15_000;
const RETRY_PERIOD_MS = 2_000;
let env: GitEnv;
let a: ControllerHandle;
let b: ControllerHandle;

const leads = (c: ControllerHandle) => c.logs.some((l) => l.includes('controller started'));
const reconciled = (c: ControllerHandle, name: string) =>
  c.logs.some((l) => l.includes('"reconcileID"') && l.includes(`"name":"${name}"`));

beforeAll(async () => {
  env = await startGitEnv(false);
  const leases = await env.namespace('e2e-failover-lease');
  const args = ['--leader-elect', '--leader-election-namespace', leases, '--health-probe-bind-address', '127.0.0.1:0'];
  a = await startController({ args });
  await eventually('the first replica leads', async () => leads(a));
  b = await startController({ args, shard: a.shard });
});

afterAll(async () => {
  await Promise.all([a?.stop('SIGKILL'), b?.stop()]);
  await env?.dispose();
});

describe('two replicas', () => {
  it('one reconciles, the standby is ready; kill -9 the leader and the standby takes over within the lease', async () => {
    const ns = await env.namespace('e2e-failover');
    const { repo, url } = await env.repo('failover', { 'cm.yaml': configMap('settings', { color: 'blue' }) });
    await createPackageSync(packageSync(ns, 'app', a.shard, { source: { url }, interval: '1h' }));
    await waitReady(ns, 'app');
    await eventually('the standby observed the leader', async () => b.logs.some((l) => l.includes('leader observed')));

    // only the leader reconciles; both report ready
    expect(reconciled(a, 'app')).toBe(true);
    expect(reconciled(b, 'app')).toBe(false);
    expect(leads(b)).toBe(false);
    expect((await fetch(`${await httpBase(a)}/readyz`)).status).toBe(200);
    expect((await fetch(`${await httpBase(b)}/readyz`)).status).toBe(200);

    // the leader dies without releasing its Lease
    const killedAt = Date.now();
    await a.stop('SIGKILL');
    const sha = await env.commit(repo, { 'cm.yaml': configMap('settings', { color: 'green' }) });
    await trigger(ns, 'app');
    await eventually('the standby leads', async () => leads(b), {
      timeoutMs: LEASE_DURATION_MS + 4 * RETRY_PERIOD_MS + 10_000,
    });
    const tookOver = Date.now() - killedAt;
    // not before the lease expired (a standby must not steal a live lease) …
    expect(tookOver).toBeGreaterThanOrEqual(LEASE_DURATION_MS - 1_000);
    // the new leader applied the commit and says so
    await waitReady(ns, 'app', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/settings`))?.data?.color).toBe('green');
    expect(reconciled(b, 'app')).toBe(true);
  });
});
