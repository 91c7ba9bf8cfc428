/**
 * Two LeaderElectors in one process against the real API server, with the production timings (lease
 * 15 s, renew deadline 10 s, retry 2 s): exactly one leads; a released lease passes over within about
 * two retry periods; a crashed leader's lease passes over only after the lease duration. The scenarios
 * run concurrently, each in its own namespace, so the file takes about one lease duration.
 */
import { afterAll, describe, it } from 'vitest';
import type { KubeClient } from '../src/adapters/kube/client.ts';
import { LEASE_NAME, LeaderElector, type LeaseSpec } from '../src/controller/leader-election.ts';
import { createNamespace, eventually, kube } from './support/cluster.ts';

const namespaces: string[] = [];
const electors: LeaderElector[] = [];
const samplers: NodeJS.Timeout[] = [];
afterAll(async () => {
  samplers.forEach(clearInterval);
  await Promise.all(electors.map((e) => e.stop({ release: false })));
  const client = await kube();
  await Promise.all(
    namespaces.map((ns) => client.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined)),
  );
});

interface Replica {
  elector: LeaderElector;
  stopped: ('stopped' | 'lost')[];
  signal?: AbortSignal;
}

function replica(client: KubeClient, namespace: string, identity: string): Replica {
  const stopped: Replica['stopped'] = [];
  let signal: AbortSignal | undefined;
  const elector = new LeaderElector({
    client,
    namespace,
    identity,
    onStartedLeading: (s) => (signal = s),
    onStoppedLeading: (why) => stopped.push(why),
  });
  electors.push(elector);
  return {
    elector,
    stopped,
    get signal() {
      return signal;
    },
  };
}

async function twoReplicas(prefix: string) {
  const client = await kube();
  const ns = await createNamespace(prefix);
  namespaces.push(ns);
  const replicas = [replica(client, ns, `${prefix}-a`), replica(client, ns, `${prefix}-b`)];
  for (const r of replicas) r.elector.start();
  // Sampled all along: two leaders at once, even briefly, fails the scenario.
  const bothLed = { seen: false };
  const sampler = setInterval(() => (bothLed.seen ||= replicas.every((r) => r.elector.isLeader)), 20);
  samplers.push(sampler);
  const leader = await eventually('a leader', async () => replicas.find((r) => r.elector.isLeader), {
    timeoutMs: 10_000,
  });
  const standby = replicas.find((r) => r !== leader)!;
  const lease = async () =>
    (
      await client.request<{ spec: LeaseSpec }>(
        'GET',
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${LEASE_NAME}`,
      )
    ).spec;
  return { client, ns, leader, standby, lease, bothLed };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.concurrent('leader election on a Lease', () => {
  it('elects exactly one leader, which keeps renewing; a released lease passes over within ~2 retry periods', async ({
    expect,
  }) => {
    const { leader, standby, lease, bothLed } = await twoReplicas('le-release');
    expect(standby.elector.isLeader).toBe(false);
    const first = await lease();
    expect(first.holderIdentity).toBe(leader.elector.identity);
    expect(first.leaseDurationSeconds).toBe(15);

    await sleep(5_000); // two renewals later, nothing changed hands
    expect([leader.elector.isLeader, standby.elector.isLeader]).toEqual([true, false]);
    const renewed = await lease();
    expect(renewed.holderIdentity).toBe(leader.elector.identity);
    expect(renewed.renewTime).not.toBe(first.renewTime);
    expect(renewed.acquireTime).toBe(first.acquireTime);

    const releasedAt = Date.now();
    await leader.elector.stop();
    expect(leader.stopped).toEqual(['stopped']);
    expect(leader.signal?.aborted).toBe(true);
    await eventually('the standby leads', async () => standby.elector.isLeader, { timeoutMs: 6_000, intervalMs: 50 });
    expect(Date.now() - releasedAt).toBeLessThan(5_000);
    const after = await lease();
    expect(after.holderIdentity).toBe(standby.elector.identity);
    expect(after.leaseTransitions).toBe((first.leaseTransitions ?? 0) + 1);
    expect(bothLed.seen).toBe(false);
  });

  it('passes a crashed leader’s lease over only after the lease duration', async ({ expect }) => {
    const { leader, standby, lease, bothLed } = await twoReplicas('le-crash');
    const crashedAt = Date.now();
    await leader.elector.stop({ release: false }); // stops renewing, like a killed process
    await sleep(9_000);
    expect(standby.elector.isLeader).toBe(false); // the lease is still valid
    await eventually('the standby leads', async () => standby.elector.isLeader, { timeoutMs: 14_000, intervalMs: 100 });
    const waited = Date.now() - crashedAt;
    // The standby counts 15 s from when it last saw the record change (up to one retry before the crash).
    expect(waited).toBeGreaterThan(12_000);
    expect(waited).toBeLessThan(21_000);
    expect((await lease()).holderIdentity).toBe(standby.elector.identity);
    expect(bothLed.seen).toBe(false);
  });

  it('stops leading at once when another holder took the lease', async ({ expect }) => {
    const { client, ns, leader, standby, lease } = await twoReplicas('le-stolen');
    await standby.elector.stop();
    const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${LEASE_NAME}`;
    const current = await client.request<{ metadata: object; spec: LeaseSpec }>('GET', path);
    await client.request('PUT', path, { body: { ...current, spec: { ...current.spec, holderIdentity: 'intruder' } } });
    await eventually('the leader notices', async () => leader.stopped.length > 0, { timeoutMs: 6_000, intervalMs: 50 });
    expect(leader.stopped).toEqual(['lost']);
    expect(leader.elector.isLeader).toBe(false);
    expect(leader.signal?.aborted).toBe(true);
    expect((await lease()).holderIdentity).toBe('intruder');
  });
});
