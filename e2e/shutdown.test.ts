/**
 * Graceful shutdown on SIGTERM: the controller takes no new work, abandons a reconcile stuck in a long
 * health wait before --shutdown-grace runs out, releases its Lease and exits 0. The PackageSync is left
 * consistent (Reconciling, inventory saved, no false failure) and the next controller finishes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageSync } from '../src/api/packagesync.ts';
import { conditionOf } from '../src/core/status.ts';
import { eventually, kube, uniqueName } from './support/cluster.ts';
import { createPackageSync, getPackageSync, packageSync, startController, waitReady } from './support/controller.ts';
import { configMap, startGitEnv, unboundClaim, type GitEnv } from './support/git-env.ts';

const GRACE_MS = 6_000;
let env: GitEnv;
const volume = uniqueName('e2e-shutdown-pv');

beforeAll(async () => {
  env = await startGitEnv(false);
});
afterAll(async () => {
  await env?.dispose();
  await (await kube()).request('DELETE', `/api/v1/persistentvolumes/${volume}`).catch(() => undefined);
});

const waitingForHealth = (ps: PackageSync | undefined) =>
  conditionOf(ps?.status, 'Reconciling')?.reason === 'HealthCheckPending' && ps;

describe('SIGTERM', () => {
  it('abandons a long health wait within the grace period, exits 0, releases the Lease; the next controller finishes', async () => {
    const leaseNs = await env.namespace('e2e-shutdown-lease');
    const ns = await env.namespace('e2e-shutdown');
    const args = ['--leader-elect', '--leader-election-namespace', leaseNs, '--shutdown-grace', `${GRACE_MS / 1000}s`];
    const first = await startController({ args });
    // leading, with its SIGTERM handler in place (a signal during start-up would just kill the process)
    await eventually('the first controller leads', async () =>
      first.logs.some((l) => l.includes('controller started')),
    );
    const { url, sha } = await env.repo('shutdown', {
      'claim.yaml': unboundClaim('data'),
      'cm.yaml': configMap('settings', { k: 'v' }),
    });
    await createPackageSync(packageSync(ns, 'app', first.shard, { source: { url }, timeout: '5m' }));
    await eventually('the reconcile waits for the claim', async () =>
      waitingForHealth(await getPackageSync(ns, 'app')),
    );

    const signalled = Date.now();
    const code = await first.stop('SIGTERM');
    const took = Date.now() - signalled;
    expect(code).toBe(0);
    expect(took).toBeLessThan(GRACE_MS + 1_000); // process start-up noise only; the controller budgets within it
    const logs = first.logs.join('\n');
    expect(logs).toContain('shutting down: taking no new work');
    expect(logs).toContain('reconcile abandoned');
    expect(logs).toContain('"msg":"stopped"');

    // consistent: still in progress (kstatus InProgress), not a failure; the inventory holds what was applied
    const left = await getPackageSync(ns, 'app');
    expect(conditionOf(left?.status, 'Ready')?.status).toBe('Unknown');
    expect(conditionOf(left?.status, 'Stalled')).toBeUndefined();
    expect(conditionOf(left?.status, 'Reconciling')?.status).toBe('True');
    expect(left?.status?.lastAppliedRevision).toBeUndefined();
    expect(left?.status?.inventory?.entries.map((e) => e.id).sort()).toEqual([
      `${ns}_data__PersistentVolumeClaim`,
      `${ns}_settings__ConfigMap`,
    ]);

    // the Lease was released (no holder), so a successor need not wait out the lease duration
    const leases = await (
      await kube()
    ).request<{ items: { spec: { holderIdentity?: string } }[] }>(
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/${leaseNs}/leases`,
    );
    expect(leases.items).toHaveLength(1);
    expect(leases.items[0]!.spec.holderIdentity ?? '').toBe('');

    // the next controller (same shard, same Lease) takes over and finishes once the claim can bind
    const next = await startController({ args, shard: first.shard });
    try {
      // the successor takes the released Lease (its start-up under load dominates the time this takes)
      await eventually(
        'the successor leads',
        async () => {
          const l = await (
            await kube()
          ).request<{ items: { spec: { holderIdentity?: string } }[] }>(
            'GET',
            `/apis/coordination.k8s.io/v1/namespaces/${leaseNs}/leases`,
          );
          return Boolean(l.items[0]?.spec.holderIdentity);
        },
        { timeoutMs: 45_000 },
      );
      await (
        await kube()
      ).request('POST', '/api/v1/persistentvolumes', {
        body: {
          metadata: { name: volume },
          spec: {
            storageClassName: 'manual-e2e',
            capacity: { storage: '1Gi' },
            accessModes: ['ReadWriteOnce'],
            persistentVolumeReclaimPolicy: 'Retain',
            hostPath: { path: `/tmp/${volume}` },
            claimRef: { namespace: ns, name: 'data' },
          },
        },
      });
      const done = await waitReady(ns, 'app', () => true, 90_000);
      expect(done.status?.lastAppliedRevision).toBe(`main@sha1:${sha}`);
      expect(done.status?.objects?.current).toBe(2);
    } finally {
      await next.stop();
    }
  });
});
