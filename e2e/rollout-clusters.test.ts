/**
 * PackageSyncSet across real clusters (issue 31, docs/adr/0042): three member kube-apiservers started here
 * (e2e/support/fleet-clusters.ts: the local etcd under their own prefixes, each with a controller-manager and kwok
 * so Deployments become ready) plus the local plane are four targets. A good revision goes through three waves
 * with bake and approval; a revision whose Deployment never becomes ready in wave two exceeds its budget and every
 * moved target is back on the last good commit; a stopped API server counts against the budget and is named; a
 * controller SIGKILLed in the middle of a wave resumes it; a cluster Secret of another namespace is never used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageSyncSet } from '../src/api/packagesyncset.ts';
import { isNotFound, type KubeClient } from '../src/adapters/kube/client.ts';
import { eventually, get } from './support/cluster.ts';
import { SHARD_LABEL } from './support/controller.ts';
import {
  localKubeconfigText,
  MEMBER_NODE,
  registerCluster,
  startFleet,
  type Fleet,
  type MemberCluster,
} from './support/fleet-clusters.ts';
import { configMap, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { approve, children, createSet, getSet, waitSet } from './support/rollout.ts';

let fx: GitEnvWithController;
let fleet: Fleet;
let c1: MemberCluster, c2: MemberCluster, c3: MemberCluster;

beforeAll(async () => {
  [fx, fleet] = await Promise.all([startGitEnv(), startFleet(['c1', 'c2', 'c3'])]);
  [c1, c2, c3] = fleet.members as [MemberCluster, MemberCluster, MemberCluster];
}, 300_000);

afterAll(async () => {
  await fx?.dispose();
  await fleet?.down();
}, 120_000);

/**
 * A Deployment of one replica. `placed`: its pod names its Node, as every cluster here can run it; otherwise it
 * asks a scheduler for it, and only the local plane runs one: on a member it stays Pending, never ready.
 */
const deployment = (name: string, placed: boolean) =>
  [
    'apiVersion: apps/v1',
    'kind: Deployment',
    `metadata: {name: ${name}}`,
    'spec:',
    '  replicas: 1',
    `  selector: {matchLabels: {app: ${name}}}`,
    '  template:',
    `    metadata: {labels: {app: ${name}}}`,
    '    spec:',
    placed ? `      nodeName: ${MEMBER_NODE}` : `      nodeSelector: {kubernetes.io/hostname: ${MEMBER_NODE}}`,
    `      containers: [{name: app, image: "registry.local/${name}:1"}]`,
    '',
  ].join('\n');

async function remoteGet<T = { data?: Record<string, string> }>(c: KubeClient, path: string): Promise<T | undefined> {
  try {
    return await c.request<T>('GET', path);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** A namespace of this file on the local plane, of the same name on every member (the children's target). */
async function namespaceEverywhere(prefix: string): Promise<string> {
  const ns = await fx.namespace(prefix);
  await Promise.all(
    fleet.members.map((m) => m.client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })),
  );
  return ns;
}

/** local (ring canary), c1 and c2 (ring main), c3 (ring last), registered in `ns`. */
async function registerAll(ns: string) {
  await registerCluster(ns, 'local', localKubeconfigText(), { ring: 'canary' });
  await registerCluster(ns, 'c1', c1.kubeconfigText, { ring: 'main' });
  await registerCluster(ns, 'c2', c2.kubeconfigText, { ring: 'main' });
  await registerCluster(ns, 'c3', c3.kubeconfigText, { ring: 'last' });
}

const childTemplate = (url: string, ns: string) => ({
  spec: {
    source: { url, ref: { branch: 'main' } },
    interval: '3s',
    retryInterval: '2s',
    timeout: '20s',
    targetNamespace: ns,
  },
});

const setBody = (url: string, ns: string, waves: unknown[], more: Record<string, unknown> = {}) => ({
  apiVersion: 'packagesync.io/v1alpha1',
  kind: 'PackageSyncSet',
  metadata: { name: 'web', labels: { [SHARD_LABEL]: fx.controller.shard } },
  spec: {
    template: childTemplate(url, ns),
    generators: { clusters: {} },
    rollout: { onFailure: 'revert', waves },
    ...more,
  },
});

const wave = (s: PackageSyncSet, name: string) => s.status!.waves!.find((w) => w.name === name)!;
const target = (s: PackageSyncSet, name: string) => s.status!.targets!.find((t) => t.name === name)!;
const pins = async (ns: string) =>
  Object.fromEntries((await children(ns, 'web')).map((c) => [c.metadata.name, c.spec.source.ref?.commit]));

describe('PackageSyncSet over four real clusters', () => {
  it('a good revision goes through three waves with approval and bake; a bad one fails wave two and every moved target is reverted', async () => {
    const ns = await namespaceEverywhere('fleet');
    await registerAll(ns);
    const { repo, url, sha: good } = await fx.repo('fleet', {
      'cm.yaml': configMap('web', { v: '1' }),
      'deploy.yaml': deployment('web', true),
    });
    await createSet(
      ns,
      setBody(url, ns, [
        {
          name: 'canary',
          targets: { selector: { matchLabels: { ring: 'canary' } } },
          gates: [{ name: 'owner', approval: {} }],
        },
        {
          name: 'main',
          targets: { selector: { matchLabels: { ring: 'main' } } },
          bakeTime: '3s',
          progressDeadline: '45s',
        },
        { name: 'rest' },
      ]),
    );

    const waiting = await waitSet(ns, 'web', 'the canary waiting for approval', (s) =>
      s.status?.blockedBy?.reason === 'WaitingForApproval',
    );
    expect(waiting.status!.blockedBy!.wave).toBe('canary');
    expect(target(waiting, 'local')).toMatchObject({ wave: 'canary', health: 'Healthy' });
    // the later waves have no child yet: nothing reached their clusters
    expect(Object.keys(await pins(ns))).toEqual(['web-local']);
    expect(await remoteGet(c1.client, `/api/v1/namespaces/${ns}/configmaps/web`)).toBeUndefined();

    await approve(ns, 'web', `canary@${good}:alice`);
    const done = await waitSet(ns, 'web', 'the good revision through every wave', (s) => s.status?.phase === 'Succeeded');
    expect(done.status!.lastGoodRevision).toBe(`main@sha1:${good}`);
    expect(wave(done, 'canary')).toMatchObject({ phase: 'Succeeded', approvedBy: 'alice' });
    const main = wave(done, 'main');
    expect(main).toMatchObject({ phase: 'Succeeded', size: 2 });
    // bake counted from the moment the whole wave was healthy; the next wave started after it
    expect(Date.parse(main.completedAt!)).toBeGreaterThanOrEqual(Date.parse(main.healthyAt!) + 3_000);
    expect(Date.parse(wave(done, 'rest').startedAt!)).toBeGreaterThanOrEqual(Date.parse(main.healthyAt!) + 3_000);
    expect(Date.parse(wave(done, 'main').startedAt!)).toBeGreaterThanOrEqual(Date.parse(wave(done, 'canary').completedAt!));
    for (const m of fleet.members) {
      // the Deployment became ready on the member itself (its controller-manager and kwok)
      const d = await remoteGet<{ status?: { readyReplicas?: number } }>(
        m.client,
        `/apis/apps/v1/namespaces/${ns}/deployments/web`,
      );
      expect(d?.status?.readyReplicas, m.name).toBe(1);
    }

    // the bad revision: its Deployment's pod needs a scheduler, which only the local plane (the canary) runs
    const bad = await fx.commit(repo, {
      'cm.yaml': configMap('web', { v: '2' }),
      'deploy.yaml': deployment('web', false),
    });
    await waitSet(ns, 'web', 'the bad revision at the canary gate', (s) =>
      s.status?.revision === `main@sha1:${bad}` && s.status.blockedBy?.reason === 'WaitingForApproval',
    );
    await approve(ns, 'web', `canary@${bad}:bob`);
    await eventually(
      'wave two on the bad revision on c1',
      async () => (await remoteGet(c1.client, `/api/v1/namespaces/${ns}/configmaps/web`))?.data?.v === '2',
      { timeoutMs: 90_000 },
    );
    const reverted = await waitSet(ns, 'web', 'the bad revision reverted', (s) => s.status?.phase === 'Reverted');
    expect(reverted.status!.failedRevision).toBe(`main@sha1:${bad}`);
    expect(reverted.status!.blockedBy).toMatchObject({ wave: 'main', reason: 'FailureBudgetExceeded' });
    expect(reverted.status!.message).toMatch(/c1/);
    expect(reverted.status!.message).toMatch(/c2/);
    expect(reverted.status!.message).toContain(`reverted to main@sha1:${good}`);
    expect(reverted.status!.conditions!.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'RolloutReverted',
    });
    // digest-exact: every child on the good commit again, and the good content back on every moved cluster
    await eventually('every child back on the good commit', async () => {
      const p = await pins(ns);
      return Object.keys(p).length === 4 && Object.values(p).every((c) => c === good);
    });
    for (const m of [c1, c2])
      await eventually(
        `${m.name} back on the good content`,
        async () => (await remoteGet(m.client, `/api/v1/namespaces/${ns}/configmaps/web`))?.data?.v === '1',
        { timeoutMs: 60_000 },
      );
    await eventually(
      'the canary back on the good content',
      async () => (await get(`/api/v1/namespaces/${ns}/configmaps/web`))?.data?.v === '1',
    );
    // wave three never saw the bad revision
    expect(target(reverted, 'c3').revision).toBe(`main@sha1:${good}`);
    expect((await remoteGet(c3.client, `/api/v1/namespaces/${ns}/configmaps/web`))?.data?.v).toBe('1');
  });
});
