/**
 * PackageSyncSet across real clusters (issue 31, docs/adr/0042): three member kube-apiservers started here
 * (e2e/support/fleet-clusters.ts: the local etcd under their own prefixes, each with a controller-manager and kwok
 * so Deployments become ready) plus the local plane are four targets. A good revision goes through three waves
 * with bake and approval; a revision whose Deployment never becomes ready in wave two exceeds its budget and every
 * moved target is back on the last good commit; a stopped API server counts against the budget and is named; a
 * controller SIGKILLed in the middle of a wave resumes it; a cluster Secret of another namespace is never used.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../test/support/oci/registry.ts';
import type { PackageSyncSet } from '../src/api/packagesyncset.ts';
import { isNotFound, type KubeClient } from '../src/adapters/kube/client.ts';
import { eventually, get, kube } from './support/cluster.ts';
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
import { approve, children, createSet, waitSet } from './support/rollout.ts';

let fx: GitEnvWithController;
let fleet: Fleet;
let c1: MemberCluster, c2: MemberCluster, c3: MemberCluster;
let registry: TestRegistry;
let work: string;

beforeAll(async () => {
  [fx, fleet, registry] = await Promise.all([startGitEnv(), startFleet(['c1', 'c2', 'c3']), startRegistry()]);
  [c1, c2, c3] = fleet.members as [MemberCluster, MemberCluster, MemberCluster];
  work = await mkdtemp(join(tmpdir(), 'psync-fleet-oci-'));
  await writeFile(join(work, 'ca.crt'), registry.caCert!);
}, 300_000);

afterAll(async () => {
  await fx?.dispose();
  await Promise.all([fleet?.down(), registry?.stop()]);
  if (work) await rm(work, { recursive: true, force: true });
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
    const {
      repo,
      url,
      sha: good,
    } = await fx.repo('fleet', {
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

    const waiting = await waitSet(
      ns,
      'web',
      'the canary waiting for approval',
      (s) => s.status?.blockedBy?.reason === 'WaitingForApproval',
    );
    expect(waiting.status!.blockedBy!.wave).toBe('canary');
    expect(target(waiting, 'local')).toMatchObject({ wave: 'canary', health: 'Healthy' });
    // the later waves have no child yet: nothing reached their clusters
    expect(Object.keys(await pins(ns))).toEqual(['web-local']);
    expect(await remoteGet(c1.client, `/api/v1/namespaces/${ns}/configmaps/web`)).toBeUndefined();

    await approve(ns, 'web', `canary@${good}:alice`);
    const done = await waitSet(
      ns,
      'web',
      'the good revision through every wave',
      (s) => s.status?.phase === 'Succeeded',
    );
    expect(done.status!.lastGoodRevision).toBe(`main@sha1:${good}`);
    expect(wave(done, 'canary')).toMatchObject({ phase: 'Succeeded', approvedBy: 'alice' });
    const main = wave(done, 'main');
    expect(main).toMatchObject({ phase: 'Succeeded', size: 2 });
    // bake counted from the moment the whole wave was healthy; the next wave started after it
    expect(Date.parse(main.completedAt!)).toBeGreaterThanOrEqual(Date.parse(main.healthyAt!) + 3_000);
    expect(Date.parse(wave(done, 'rest').startedAt!)).toBeGreaterThanOrEqual(Date.parse(main.healthyAt!) + 3_000);
    expect(Date.parse(wave(done, 'main').startedAt!)).toBeGreaterThanOrEqual(
      Date.parse(wave(done, 'canary').completedAt!),
    );
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
    await waitSet(
      ns,
      'web',
      'the bad revision at the canary gate',
      (s) => s.status?.revision === `main@sha1:${bad}` && s.status.blockedBy?.reason === 'WaitingForApproval',
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
    // the wave failed at its first failure (budget 0), naming it: a wave-two cluster whose Deployment is not ready
    const named = /: (c[12]) \((HealthCheckFailed|ProgressDeadlineExceeded)\)/.exec(reverted.status!.message!);
    expect(named, reverted.status!.message).not.toBeNull();
    // its target entry now follows the revert: pinned back to the good commit
    expect(target(reverted, named![1]!)).toMatchObject({ wave: 'main', revision: `main@sha1:${good}` });
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
        { timeoutMs: 120_000 },
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

describe('PackageSyncSet: progress lives in the cluster', () => {
  it('a controller SIGKILLed in the middle of a wave resumes it: no finished wave re-runs, no gate is skipped', async () => {
    const ns = await namespaceEverywhere('fleet-crash');
    await registerAll(ns);
    // c1 (wave two's first, by name) admits no Pod until the quota goes: its Deployment is not ready, so wave two
    // holds with c1 moving and c2 not started. Made before the set: children here are ready in well under a second,
    // and the whole rollout up to the gate took 1.3 s (a test that polled for a passing "Progressing" missed it on a
    // loaded machine and waited at a gate it never approved). The members run no quota controller: the quota's
    // status (what admission checks) is written here, full.
    const quota = `/api/v1/namespaces/${ns}/resourcequotas`;
    const full = { hard: { pods: '0' }, used: { pods: '0' } };
    await c1.client.request('POST', quota, { body: { metadata: { name: 'hold' }, spec: { hard: { pods: '0' } } } });
    const held = await c1.client.request<{ metadata: { resourceVersion: string } }>('GET', `${quota}/hold`);
    await c1.client.request('PUT', `${quota}/hold/status`, {
      body: { metadata: { name: 'hold', resourceVersion: held.metadata.resourceVersion }, status: full },
    });
    const { url, sha } = await fx.repo('fleet-crash', {
      'cm.yaml': configMap('web', { v: '1' }),
      'deploy.yaml': deployment('web', true),
    });
    await createSet(
      ns,
      setBody(
        url,
        ns,
        [
          { name: 'canary', targets: { selector: { matchLabels: { ring: 'canary' } } } },
          {
            name: 'main',
            targets: { selector: { matchLabels: { ring: 'main' } } },
            maxParallel: 1,
            gates: [{ name: 'owner', approval: {} }],
          },
          { name: 'rest' },
        ],
        {
          // the hold lasts until c1's health wait gives up: longer than the test needs, never a failed target
          template: { spec: { ...childTemplate(url, ns).spec, timeout: '2m' } },
        },
      ),
    );
    const midWave = await waitSet(
      ns,
      'web',
      'wave two in progress, c1 moving',
      (s) => wave(s, 'main')?.phase === 'Progressing' && target(s, 'c1')?.health === 'Progressing',
    );
    // c1's Deployment applied and held: the wave is still on c1, c2 not started
    await eventually('c1 applied', async () => remoteGet(c1.client, `/apis/apps/v1/namespaces/${ns}/deployments/web`));
    const stillMid = await waitSet(ns, 'web', 'the set', () => true);
    expect(wave(stillMid, 'main').phase).toBe('Progressing');
    expect(target(stillMid, 'c2').startedAt).toBeUndefined();
    await fx.controller.restart(); // SIGKILL, then a new process
    await c1.client.request('DELETE', `${quota}/hold`);
    // the gate after wave two (before the last wave)
    const gated = await waitSet(
      ns,
      'web',
      'wave two at its approval gate',
      (s) => s.status?.blockedBy?.wave === 'main' && s.status.blockedBy.reason === 'WaitingForApproval',
    );
    // the finished wave and the started targets kept their recorded times: nothing re-ran
    expect(wave(gated, 'canary').completedAt).toBe(wave(midWave, 'canary').completedAt);
    expect(target(gated, 'local').startedAt).toBe(target(midWave, 'local').startedAt);
    expect(wave(gated, 'main').startedAt).toBe(wave(midWave, 'main').startedAt);
    expect(target(gated, 'c1').startedAt).toBe(target(midWave, 'c1').startedAt);
    // the gate was not skipped across the crash: the last wave's cluster got nothing
    expect(Object.keys(await pins(ns)).sort()).toEqual(['web-c1', 'web-c2', 'web-local']);
    expect(await remoteGet(c3.client, `/api/v1/namespaces/${ns}/configmaps/web`)).toBeUndefined();

    await approve(ns, 'web', `main@${sha}:carol`);
    const done = await waitSet(ns, 'web', 'the rollout finished', (s) => s.status?.phase === 'Succeeded');
    expect(wave(done, 'main')).toMatchObject({ approvedBy: 'carol', phase: 'Succeeded' });
    expect(Date.parse(wave(done, 'rest').startedAt!)).toBeGreaterThanOrEqual(
      Date.parse(wave(done, 'main').approvedAt!),
    );
    await eventually(
      'c3 applied',
      async () => (await remoteGet(c3.client, `/api/v1/namespaces/${ns}/configmaps/web`))?.data?.v === '1',
    );
  });
});

describe('PackageSyncSet: an unreachable cluster', () => {
  it('a stopped API server counts against the budget and is named; the moved targets are reverted', async () => {
    const ns = await namespaceEverywhere('fleet-down');
    await registerCluster(ns, 'c1', c1.kubeconfigText, { ring: 'main' });
    await registerCluster(ns, 'c2', c2.kubeconfigText, { ring: 'main' });
    await registerCluster(ns, 'c3', c3.kubeconfigText, { ring: 'last' });
    const { repo, url, sha: good } = await fx.repo('fleet-down', { 'cm.yaml': configMap('web', { v: '1' }) });
    await createSet(
      ns,
      setBody(url, ns, [
        { name: 'main', targets: { selector: { matchLabels: { ring: 'main' } } } },
        { name: 'last', failureBudget: 0, progressDeadline: '60s' },
      ]),
    );
    await waitSet(ns, 'web', 'the first revision through', (s) => s.status?.phase === 'Succeeded');

    await c3.stopApiServer();
    try {
      const next = await fx.commit(repo, { 'cm.yaml': configMap('web', { v: '2' }) });
      const reverted = await waitSet(ns, 'web', 'the rollout stopped at c3', (s) => s.status?.phase === 'Reverted');
      expect(reverted.status!.failedRevision).toBe(`main@sha1:${next}`);
      expect(reverted.status!.blockedBy).toMatchObject({ wave: 'last', reason: 'FailureBudgetExceeded' });
      expect(reverted.status!.message).toContain('c3 (unreachable)');
      expect(target(reverted, 'c3')).toMatchObject({ health: 'Unreachable', reason: 'RemoteClusterUnreachable' });
      expect(wave(reverted, 'last')).toMatchObject({ failed: 1, budget: 0 });
      // the wave before it had moved c1 and c2: both back on the good commit and content
      for (const m of [c1, c2])
        await eventually(
          `${m.name} back on the good content`,
          async () => (await remoteGet(m.client, `/api/v1/namespaces/${ns}/configmaps/web`))?.data?.v === '1',
          { timeoutMs: 120_000 },
        );
      // every child pinned to the good commit again, c3's too: each child's pin is a write of its own
      await eventually('every pin on the good commit', async () =>
        Object.values(await pins(ns)).every((c) => c === good),
      );
    } finally {
      await c3.startApiServer();
    }
  });
});

describe('PackageSyncSet: tenancy', () => {
  it('never uses a cluster Secret of another namespace, and says why it has no target', async () => {
    const ns = await fx.namespace('fleet-tenant');
    const other = await fx.namespace('fleet-other');
    // another tenant registered c1 in its own namespace, with the labels this set selects
    await registerCluster(other, 'c1', c1.kubeconfigText, { team: 'shared' });
    const { url } = await fx.repo('fleet-tenant', { 'cm.yaml': configMap('stolen', { v: '1' }) });
    await createSet(ns, {
      ...setBody(url, ns, [{ name: 'all' }]),
      spec: {
        template: childTemplate(url, ns),
        generators: { clusters: { selector: { matchLabels: { team: 'shared' } } } },
        rollout: { waves: [{ name: 'all' }] },
      },
    });
    const s = await waitSet(
      ns,
      'web',
      'the set settled',
      (x) => x.status?.observedGeneration === 1 && !!x.status.message,
    );
    expect(s.status!.targets ?? []).toEqual([]);
    expect(s.status!.message).toMatch(/no target/);
    expect(s.status!.message).toContain('its own namespace');
    expect(await children(ns, 'web')).toEqual([]);
    expect(await remoteGet(c1.client, `/api/v1/namespaces/${ns}/configmaps/stolen`)).toBeUndefined();
  });
});

/** `packagesync push artifact` of `files` to `target` (TLS, htpasswd); returns the manifest digest. */
async function push(target: string, files: Record<string, string>): Promise<string> {
  const dir = join(work, randomBytes(4).toString('hex'));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  const cli = resolve(import.meta.dirname, '../bin/packagesync.js');
  const { stdout } = await promisify(execFile)(
    'node',
    [
      cli,
      'push',
      'artifact',
      dir,
      target,
      '--source',
      'https://example.com/web.git',
      '--revision',
      'main@sha1:0123',
      '--ca-file',
      join(work, 'ca.crt'),
    ],
    { env: { ...process.env, PACKAGESYNC_OCI_CREDS: `${registry.username}:${registry.password}` }, timeout: 60_000 },
  );
  return /@(sha256:[0-9a-f]{64})/.exec(stdout)![1]!;
}

describe('PackageSyncSet of an OCI artifact', () => {
  it('rolls out by digest (the revision is the digest) and reverts digest-exact when the tag moves to a bad one', async () => {
    const ns = await namespaceEverywhere('fleet-oci');
    await registerCluster(ns, 'local', localKubeconfigText(), { ring: 'canary' });
    await registerCluster(ns, 'c1', c1.kubeconfigText, { ring: 'main' });
    const auths = {
      [registry.host]: { auth: Buffer.from(`${registry.username}:${registry.password}`).toString('base64') },
    };
    await (
      await kube()
    ).request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: {
        metadata: { name: 'registry' },
        type: 'kubernetes.io/dockerconfigjson',
        stringData: { '.dockerconfigjson': JSON.stringify({ auths }), 'ca.crt': registry.caCert },
      },
    });
    const artifact = `oci://${registry.host}/fleet/${ns}`;
    const good = await push(`${artifact}:stable`, {
      'cm.yaml': configMap('web', { v: '1' }),
      'deploy.yaml': deployment('web', true),
    });
    const body = setBody('unused', ns, [
      { name: 'canary', targets: { selector: { matchLabels: { ring: 'canary' } } } },
      { name: 'main', progressDeadline: '45s' },
    ]);
    const template = body.spec.template.spec as Record<string, unknown>;
    template.source = { oci: { url: artifact, ref: { tag: 'stable' }, secretRef: { name: 'registry' } } };
    await createSet(ns, body);
    const done = await waitSet(ns, 'web', 'the artifact through both waves', (s) => s.status?.phase === 'Succeeded');
    expect(done.status!.revision).toBe(`stable@${good}`);
    expect(done.status!.lastGoodRevision).toBe(`stable@${good}`);
    // each child pinned by the digest alone, applied at exactly that digest
    for (const c of await children(ns, 'web')) {
      expect(c.spec.source.oci?.ref).toEqual({ digest: good });
      expect(c.status?.lastAppliedRevision).toBe(good);
    }

    // the tag moves to an artifact whose Deployment no member can place: wave two fails, both go back by digest
    const bad = await push(`${artifact}:stable`, {
      'cm.yaml': configMap('web', { v: '2' }),
      'deploy.yaml': deployment('web', false),
    });
    const reverted = await waitSet(ns, 'web', 'the moved tag reverted', (s) => s.status?.phase === 'Reverted');
    expect(reverted.status!.failedRevision).toBe(`stable@${bad}`);
    expect(reverted.status!.message).toContain(`reverted to stable@${good}`);
    expect(reverted.status!.blockedBy).toMatchObject({ wave: 'main', reason: 'FailureBudgetExceeded' });
    expect(reverted.status!.message).toMatch(/c1 \((HealthCheckFailed|ProgressDeadlineExceeded)\)/);
    expect(target(reverted, 'c1').revision).toBe(`stable@${good}`);
    // Ready at the current generation, not lastAppliedRevision alone: c1's run of the bad digest failed, so its
    // lastAppliedRevision stayed on the good one the whole time, and read so before c1 applied it again
    await eventually('every child back on the good digest, applied', async () => {
      const cs = await children(ns, 'web');
      return (
        cs.length === 2 &&
        cs.every(
          (c) =>
            c.spec.source.oci?.ref?.digest === good &&
            c.status?.observedGeneration === c.metadata.generation &&
            c.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True' &&
            c.status?.lastAppliedRevision === good,
        )
      );
    });
    expect((await remoteGet(c1.client, `/api/v1/namespaces/${ns}/configmaps/web`))?.data?.v).toBe('1');
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/web`))?.data?.v).toBe('1');
  });
});
