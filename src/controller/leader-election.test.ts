import { describe, expect, it } from 'vitest';
import { KubeApiError, type KubeClient } from '../adapters/kube/client.ts';
import { LeaderElector, type LeaseSpec } from './leader-election.ts';

/** An in-memory Lease endpoint with resourceVersion checks, and a switch to cut the network. */
function fakeApi() {
  let lease: { metadata: Record<string, unknown>; spec: LeaseSpec } | undefined;
  let rv = 0;
  const api = {
    down: false,
    writes: 0,
    /** When the last write went through: the renew deadline counts from the last successful renewal. */
    lastWriteAt: 0,
    async request(method: string, _path: string, opts: { body?: unknown } = {}) {
      await new Promise((r) => setTimeout(r, 1));
      if (api.down) throw new Error('connection refused');
      const body = opts.body as typeof lease;
      if (method === 'GET') {
        if (!lease) throw new KubeApiError(404, 'NotFound', 'not found');
        return structuredClone(lease);
      }
      if (method === 'POST' && lease) throw new KubeApiError(409, 'AlreadyExists', 'exists');
      if (method === 'PUT' && body?.metadata.resourceVersion !== lease?.metadata.resourceVersion) {
        throw new KubeApiError(409, 'Conflict', 'the object has been modified');
      }
      api.writes++;
      api.lastWriteAt = Date.now();
      lease = { metadata: { ...body!.metadata, resourceVersion: String(++rv) }, spec: body!.spec };
      return structuredClone(lease);
    },
  };
  return api;
}

describe('LeaderElector', () => {
  const fast = { leaseDurationSeconds: 1, renewDeadlineMs: 300, retryPeriodMs: 50, namespace: 'ns' };

  it('lets exactly one of two candidates lead, and stops leading when renewal fails past the deadline', async () => {
    const api = fakeApi();
    const events: string[] = [];
    const make = (id: string) =>
      new LeaderElector({
        ...fast,
        client: api as unknown as KubeClient,
        identity: id,
        onStartedLeading: () => events.push(`${id} leads`),
        onStoppedLeading: (why) => events.push(`${id} ${why}`),
      });
    const [a, b] = [make('a'), make('b')];
    a.start();
    b.start();
    await new Promise((r) => setTimeout(r, 400));
    expect([a.isLeader, b.isLeader].filter(Boolean)).toHaveLength(1);
    expect(events).toHaveLength(1);
    const leader = a.isLeader ? 'a' : 'b';

    api.down = true;
    const cutAt = Date.now();
    while (events.length < 2 && Date.now() - cutAt < 2_000) await new Promise((r) => setTimeout(r, 10));
    expect(events[1]).toBe(`${leader} lost`);
    // Gave up after the renew deadline (300 ms since the last successful renewal, which may predate the cut
    // by a retry period or more on a loaded machine), and before the lease (1 s) could pass to anyone else.
    expect(Date.now() - api.lastWriteAt).toBeGreaterThanOrEqual(300);
    expect(Date.now() - api.lastWriteAt).toBeLessThan(1_000);
    api.down = false;
    await Promise.all([a.stop(), b.stop()]);
  });

  it('refuses timings where the renew deadline outlasts the lease', () => {
    expect(
      () =>
        new LeaderElector({
          ...fast,
          renewDeadlineMs: 1_000,
          client: fakeApi() as unknown as KubeClient,
          identity: 'a',
          onStartedLeading: () => undefined,
          onStoppedLeading: () => undefined,
        }),
    ).toThrow(/renewDeadline/);
  });
});
