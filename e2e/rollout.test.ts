/**
 * PackageSyncSet on the real control plane (issue 31, docs/adr/0042): one registered cluster (a kubeconfig
 * Secret naming this control plane) × three directories are three targets in three waves. A good revision goes
 * through them with an approval gate and a bake; a bad one exceeds wave two's budget and every moved target is
 * pinned back to the last good commit, with the reason in status; a cluster Secret of another namespace is never
 * a target.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, get, kube, kubeconfig } from './support/cluster.ts';
import { SHARD_LABEL } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { approve, children, getSet, setsPath } from './support/rollout.ts';

let fx: GitEnvWithController;

beforeAll(async () => {
  fx = await startGitEnv();
});

afterAll(async () => {
  await fx?.dispose();
});

async function clusterSecret(ns: string, name: string, labels: Record<string, string>) {
  const client = await kube();
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: {
      metadata: { name, labels: { 'packagesync.io/secret-type': 'cluster', ...labels } },
      stringData: { value: readFileSync(kubeconfig(), 'utf8') },
    },
  });
}

/** A registered cluster whose API server does not answer (a kubeconfig of this cluster, aimed at a closed port). */
async function unreachableClusterSecret(ns: string, name: string) {
  const client = await kube();
  const text = readFileSync(kubeconfig(), 'utf8').replace(/server: https:\/\/[^\s]+/, 'server: https://127.0.0.1:9');
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { metadata: { name, labels: { 'packagesync.io/secret-type': 'cluster' } }, stringData: { value: text } },
  });
}

describe('PackageSyncSet: a revision rolled out in waves', () => {
  it('goes through waves with an approval gate; a bad revision over budget is reverted to the last good commit', async () => {
    const ns = await fx.namespace('rollout');
    const other = await fx.namespace('rollout-other');
    const {
      repo,
      url,
      sha: good,
    } = await fx.repo('rollout', {
      'dir-a/cm.yaml': configMap('a', { v: '1' }),
      'dir-b/cm.yaml': configMap('b', { v: '1' }),
      'dir-c/cm.yaml': configMap('c', { v: '1' }),
    });
    await clusterSecret(ns, 'local', { env: 'e2e' });
    // another tenant's cluster, with the same labels: never a target of a set in `ns`
    await clusterSecret(other, 'theirs', { env: 'e2e' });
    const set = {
      apiVersion: 'packagesync.io/v1alpha1',
      kind: 'PackageSyncSet',
      metadata: { name: 'web', labels: { [SHARD_LABEL]: fx.controller.shard } },
      spec: {
        template: {
          spec: {
            source: { url, ref: { branch: 'main' } },
            interval: '3s',
            retryInterval: '2s',
            timeout: '30s',
            targetNamespace: ns,
          },
        },
        generators: {
          clusters: { selector: { matchLabels: { env: 'e2e' } } },
          directories: ['dir-a', 'dir-b', 'dir-c'],
        },
        rollout: {
          onFailure: 'revert',
          waves: [
            { name: 'canary', targets: { count: 1 }, gates: [{ name: 'approve', approval: {} }] },
            { name: 'middle', targets: { count: 1 }, bakeTime: '2s', progressDeadline: '30s' },
            { name: 'rest' },
          ],
        },
      },
    };
    await (await kube()).request('POST', setsPath(ns), { body: set });

    // wave one is stamped, healthy, and waits for a person; nothing of the later waves exists yet
    const waiting = await eventually('the canary waiting for approval', async () => {
      const s = await getSet(ns, 'web');
      return s.status?.blockedBy?.reason === 'WaitingForApproval' && s;
    });
    expect(waiting.status!.blockedBy!.message).toContain(`packagesync.io/approve=canary@${good}`);
    expect(waiting.status!.targets!.map((t) => t.cluster)).toEqual(['local', 'local', 'local']);
    expect(
      (await children(ns, 'web')).map((c) => [
        c.metadata.name.startsWith('web-local-dir-a-'),
        c.spec.source.ref?.commit,
      ]),
    ).toEqual([[true, good]]);
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/a`)).toBeDefined();
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/b`)).toBeUndefined();

    await approve(ns, 'web', `canary@${good}:alice`);
    const done = await eventually(
      'the good revision through every wave',
      async () => {
        const s = await getSet(ns, 'web');
        return s.status?.phase === 'Succeeded' && s;
      },
      { timeoutMs: 90_000 },
    );
    expect(done.status!.lastGoodRevision).toBe(`main@sha1:${good}`);
    expect(done.status!.waves!.find((w) => w.name === 'canary')).toMatchObject({
      approvedBy: 'alice',
      phase: 'Succeeded',
    });
    expect(done.status!.conditions!.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      reason: 'RolloutSucceeded',
    });
    await eventually('every child on the good commit', async () => {
      const pins = (await children(ns, 'web')).map((c) => c.spec.source.ref?.commit);
      return pins.length === 3 && pins.every((p) => p === good);
    });
    await eventually(
      'wave three applied',
      async () => (await get(`/api/v1/namespaces/${ns}/configmaps/c`))?.data?.v === '1',
    );

    // a revision whose dir-b does not even parse: the canary (approved) takes it, wave two fails, budget 0
    const bad = await fx.commit(repo, {
      'dir-a/cm.yaml': configMap('a', { v: '2' }),
      'dir-b/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n',
    });
    await eventually('the bad revision at the canary gate', async () => {
      const s = await getSet(ns, 'web');
      return s.status?.revision === `main@sha1:${bad}` && s.status.blockedBy?.reason === 'WaitingForApproval';
    });
    await eventually(
      'the canary on the bad revision',
      async () => (await get(`/api/v1/namespaces/${ns}/configmaps/a`))?.data?.v === '2',
    );
    await approve(ns, 'web', `canary@${bad}:bob`);
    const reverted = await eventually(
      'the bad revision reverted',
      async () => {
        const s = await getSet(ns, 'web');
        return s.status?.phase === 'Reverted' && s;
      },
      { timeoutMs: 90_000 },
    );
    expect(reverted.status!.failedRevision).toBe(`main@sha1:${bad}`);
    expect(reverted.status!.blockedBy).toMatchObject({ wave: 'middle', reason: 'FailureBudgetExceeded' });
    expect(reverted.status!.message).toMatch(/local\/dir-b/);
    expect(reverted.status!.message).toContain(`reverted to main@sha1:${good}`);
    expect(reverted.status!.conditions!.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'RolloutReverted',
    });
    // digest-exact: every child pinned to the good commit again (status is written first, the children follow)
    await eventually('every child back on the good commit', async () =>
      (await children(ns, 'web')).every((c) => c.spec.source.ref?.commit === good),
    );
    await eventually(
      'the canary back on the good content',
      async () => (await get(`/api/v1/namespaces/${ns}/configmaps/a`))?.data?.v === '1',
    );
    // wave three never saw the bad revision
    expect(reverted.status!.targets!.find((t) => t.name === 'local/dir-c')!.revision).toBe(`main@sha1:${good}`);
  });
});

describe('PackageSyncSet: an unreachable cluster', () => {
  it('counts against the budget and is named; with nothing to revert to, the rollout holds', async () => {
    const ns = await fx.namespace('rollout-unreachable');
    const { url } = await fx.repo('rollout-unreachable', { 'cm.yaml': configMap('a', { v: '1' }) });
    await unreachableClusterSecret(ns, 'gone');
    await (
      await kube()
    ).request('POST', setsPath(ns), {
      body: {
        apiVersion: 'packagesync.io/v1alpha1',
        kind: 'PackageSyncSet',
        metadata: { name: 'web', labels: { [SHARD_LABEL]: fx.controller.shard } },
        spec: {
          template: {
            spec: { source: { url, ref: { branch: 'main' } }, interval: '3s', timeout: '10s', targetNamespace: ns },
          },
          generators: { clusters: {} },
          rollout: { waves: [{ name: 'only' }] },
        },
      },
    });
    const held = await eventually(
      'the rollout held on the unreachable cluster',
      async () => {
        const s = await getSet(ns, 'web');
        return s.status?.phase === 'Holding' && s;
      },
      { timeoutMs: 90_000 },
    );
    expect(held.status!.blockedBy).toMatchObject({ wave: 'only', reason: 'FailureBudgetExceeded' });
    expect(held.status!.message).toContain('gone (unreachable)');
    expect(held.status!.message).toContain('nothing to revert to');
    expect(held.status!.targets).toEqual([
      expect.objectContaining({ name: 'gone', health: 'Unreachable', reason: 'RemoteClusterUnreachable' }),
    ]);
    expect(held.status!.conditions!.find((c) => c.type === 'Stalled')?.status).toBe('True');
  });
});

describe('PackageSyncSet: progress lives in the cluster', () => {
  it('a controller SIGKILLed during bake resumes it: the bake is neither restarted nor skipped, no finished wave re-runs', async () => {
    const ns = await fx.namespace('rollout-crash');
    const { url, sha } = await fx.repo('rollout-crash', {
      'dir-a/cm.yaml': configMap('a', { v: '1' }),
      'dir-b/cm.yaml': configMap('b', { v: '1' }),
    });
    await clusterSecret(ns, 'local', {});
    const bakeMs = 15_000;
    await (
      await kube()
    ).request('POST', setsPath(ns), {
      body: {
        apiVersion: 'packagesync.io/v1alpha1',
        kind: 'PackageSyncSet',
        metadata: { name: 'web', labels: { [SHARD_LABEL]: fx.controller.shard } },
        spec: {
          template: { spec: { source: { url, ref: { branch: 'main' } }, interval: '3s', targetNamespace: ns } },
          generators: { clusters: {}, directories: ['dir-a', 'dir-b'] },
          rollout: { waves: [{ name: 'first', targets: { count: 1 }, bakeTime: '15s' }, { name: 'second' }] },
        },
      },
    });
    const baking = await eventually('wave one baking', async () => {
      const s = await getSet(ns, 'web');
      return s.status?.phase === 'Baking' && s;
    });
    const healthyAt = Date.parse(baking.status!.waves![0]!.healthyAt!);
    await fx.controller.restart(); // SIGKILL, then a new process
    const done = await eventually(
      'the rollout finished by the new process',
      async () => {
        const s = await getSet(ns, 'web');
        return s.status?.phase === 'Succeeded' && s;
      },
      { timeoutMs: 90_000 },
    );
    const [first, second] = done.status!.waves!;
    // the bake counted from the recorded moment, across the crash
    expect(Date.parse(first!.healthyAt!)).toBe(healthyAt);
    expect(Date.parse(first!.completedAt!)).toBeGreaterThanOrEqual(healthyAt + bakeMs);
    expect(Date.parse(second!.startedAt!)).toBeGreaterThanOrEqual(healthyAt + bakeMs);
    // wave one's target was stamped once: its pin's start time is the one recorded before the crash
    const before = baking.status!.targets!.find((t) => t.name === 'local/dir-a')!;
    expect(done.status!.targets!.find((t) => t.name === 'local/dir-a')!.startedAt).toBe(before.startedAt);
    await eventually('both children on the commit', async () => {
      const pins = (await children(ns, 'web')).map((c) => c.spec.source.ref?.commit);
      return pins.length === 2 && pins.every((p) => p === sha);
    });
  });
});
