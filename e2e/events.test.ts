/**
 * Events as `kubectl describe pks` shows them: every outcome has one (DependencyNotReady and failed steps
 * included), and a retry of the same outcome counts up the event already written instead of
 * adding one per retry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kube } from './support/cluster.ts';
import { createPackageSync, packageSync, waitCondition } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';

interface Event {
  reason: string;
  type: string;
  message: string;
  count?: number;
  involvedObject: { name: string };
}

let env: GitEnv;
beforeAll(async () => {
  env = await startGitEnv();
});
afterAll(async () => {
  await env?.dispose();
});

async function eventsOf(ns: string, name: string): Promise<Event[]> {
  const client = await kube();
  const list = await client.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns}/events`);
  return list.items.filter((e) => e.involvedObject.name === name);
}

describe('events', () => {
  it('a failure retried counts up one Warning event instead of adding one per retry', async () => {
    const ns = await env.namespace('e2e-events-retry');
    const { url } = await env.repo('retry', { 'cm.yaml': configMap('a', { k: 'v' }) });
    const spec = { source: { url, path: 'missing' }, retryInterval: '1s' };
    await createPackageSync(packageSync(ns, 'ps', env.controller!.shard, spec));
    await waitCondition(ns, 'ps', 'Ready', 'False', 'PathNotFound');
    const counted = await eventually(
      'the PathNotFound event counted at least three times',
      async () => {
        const found = (await eventsOf(ns, 'ps')).filter((e) => e.reason === 'PathNotFound');
        return (found[0]?.count ?? 0) >= 3 && found;
      },
      { timeoutMs: 60_000 },
    );
    expect(counted).toHaveLength(1);
    expect(counted[0]).toMatchObject({ type: 'Warning' });
    expect(counted[0]!.message).toContain('missing');
  });

  it('a dependsOn not Ready has its event, counted up while it waits', async () => {
    const ns = await env.namespace('e2e-events-gates');
    const { url } = await env.repo('gates', { 'cm.yaml': configMap('a', { k: 'v' }) });
    const spec = { source: { url }, dependsOn: [{ name: 'absent' }], retryInterval: '1s' };
    await createPackageSync(packageSync(ns, 'waits', env.controller!.shard, spec));
    await waitCondition(ns, 'waits', 'Ready', 'False', 'DependencyNotReady');
    const waits = await eventually(
      'a DependencyNotReady event counted twice',
      async () => {
        const found = (await eventsOf(ns, 'waits')).filter((e) => e.reason === 'DependencyNotReady');
        return (found[0]?.count ?? 0) >= 2 && found;
      },
      { timeoutMs: 60_000 },
    );
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ type: 'Normal', message: `dependency ${ns}/absent does not exist` });
  });
});
