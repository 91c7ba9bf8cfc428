/**
 * Drift on the real control plane (docs/drift.md, docs/adr/0022): a change someone else makes to a field the
 * package sets is reverted within seconds in Correct mode, with no interval due (interval 1h); reported in
 * status, a condition kstatus ignores, a metric and an event in Detect mode, with nothing written; a field an
 * ignore rule names (an HPA's replicas) is left alone; a watch event that changed nothing of the package's
 * writes nothing.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageSync } from '../src/api/packagesync.ts';
import { conditionOf } from '../src/core/status.ts';
import { commitFiles } from '../test/support/git/index.ts';
import { eventReasons, eventually, kube } from './support/cluster.ts';
import { getPackageSync, httpBase, patchPackageSync, SERVE_METRICS, waitReady } from './support/controller.ts';
import { quickSpec, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, configMap, deployment, get, sleep, trigger } from './support/safety.ts';

const root = resolve(import.meta.dirname, '..');
let env: GitEnvWithController;
let base: string;
let kstatusCheck: string;

beforeAll(async () => {
  const build = resolve(root, 'hack/build-cluster.sh');
  kstatusCheck = /KSTATUS_CHECK=(.*)/.exec(execFileSync(build, ['paths'], { encoding: 'utf8' }))![1]!;
  if (!existsSync(kstatusCheck)) execFileSync(build, ['kstatus-check'], { stdio: 'inherit' });
  env = await startGitEnv({
    args: SERVE_METRICS,
  });
  base = await httpBase(env.controller);
}, 600_000);
afterAll(async () => {
  await env?.dispose();
});

const deployPath = (ns: string, name: string) => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;

/** Someone else's change: a merge patch as another field manager (what `kubectl edit` and `kubectl patch` send). */
async function editAs(manager: string, path: string, body: unknown, subresource = ''): Promise<string> {
  const res = await (
    await kube()
  ).request<{ metadata: { resourceVersion: string } }>('PATCH', `${path}${subresource}`, {
    query: { fieldManager: manager },
    contentType: 'application/merge-patch+json',
    body,
  });
  return res.metadata.resourceVersion;
}

async function scrape(): Promise<string> {
  return (await fetch(`${base}/metrics`)).text();
}
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `) || l.startsWith(`${name}{${labels}`));
  return line ? Number(line.split(' ').pop()) : undefined;
}
async function kstatus(ps: PackageSync): Promise<string> {
  const child = promisify(execFile)(kstatusCheck, [], { encoding: 'utf8' });
  child.child.stdin!.end(JSON.stringify(ps));
  return (await child).stdout.trim();
}

describe.concurrent('drift', () => {
  it('Correct: an edit of a managed field is reverted within seconds, named in an event and status', async () => {
    const ns = await env.namespace('e2e-drift-correct');
    const { url } = await env.repo('drift-correct', {
      'cm.yaml': configMap('settings', { color: 'blue' }),
      'd.yaml': deployment('web', { replicas: 1 }),
    });
    await env.syncReady(ns, 'ps', quickSpec(url));

    // The two edits may be corrected by one check or by two (at most one check per 5 s: the second edit can land
    // after the first check began, and a check reads its objects from the watches in milliseconds): every
    // correction names its objects in status until the next one, so watch status from before the edits on.
    const named = new Map<string, unknown>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const o = (await getPackageSync(ns, 'ps'))?.status?.lastDriftCorrection?.objects ?? [];
        for (const x of o) named.set(x.object, x);
        await sleep(200);
      }
    })();
    await editAs('kubectl-edit', deployPath(ns, 'web'), { spec: { replicas: 5 } });
    await editAs('kubectl-edit', cmPath(ns, 'settings'), { data: { color: 'red' } });
    await eventually('both edits reverted, without a trigger or an interval', async () => {
      const d = await get(deployPath(ns, 'web'));
      const cm = await get(cmPath(ns, 'settings'));
      return (d?.spec as { replicas: number }).replicas === 1 && cm?.data?.color === 'blue';
    });
    const ps = await eventually('status names the correction', async () => {
      const p = await getPackageSync(ns, 'ps');
      return (p?.status?.lastDriftCorrection?.objects.length ?? 0) > 0 && p;
    });
    await eventually('both objects named by lastDriftCorrection', async () => named.size === 2);
    watching = false;
    await watcher;
    const objects = [...named.values()];
    expect(objects).toEqual(
      expect.arrayContaining([
        { object: `Deployment/${ns}/web`, paths: ['/spec/replicas'], managers: ['kubectl-edit'] },
        { object: `ConfigMap/${ns}/settings`, paths: ['/data/color'], managers: ['kubectl-edit'] },
      ]),
    );
    expect(conditionOf(ps.status, 'Drifted')).toBeUndefined();
    await eventually('a DriftCorrected event', async () => (await eventReasons(ns, 'ps')).includes('DriftCorrected'));
    expect(sample(await scrape(), 'packagesync_drift_corrected_objects_total')).toBeGreaterThanOrEqual(2);
  });

  it('Detect: reported in status, a condition kstatus ignores, a metric and an event; nothing written', async () => {
    const ns = await env.namespace('e2e-drift-detect');
    const { url } = await env.repo('drift-detect', {
      'cm.yaml': configMap('settings', { color: 'blue', size: 's' }),
      'secret.yaml': 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: hunter2\n',
    });
    await env.syncReady(ns, 'ps', quickSpec(url, { driftPolicy: 'Detect' }));

    const cmVersion = await editAs('someone', cmPath(ns, 'settings'), { data: { color: 'red' } });
    const secretVersion = await editAs('someone', `/api/v1/namespaces/${ns}/secrets/creds`, {
      stringData: { password: 'swordfish' },
    });
    const ps = await eventually('status.drift lists both', async () => {
      const p = await getPackageSync(ns, 'ps');
      return p?.status?.drift?.total === 2 && p;
    });
    expect(ps.status?.drift?.objects).toEqual(
      expect.arrayContaining([
        { object: `ConfigMap/${ns}/settings`, paths: ['/data/color'] },
        { object: `Secret/${ns}/creds`, paths: ['/data'] },
      ]),
    );
    expect(JSON.stringify(ps.status)).not.toMatch(/swordfish|hunter2/);
    expect(conditionOf(ps.status, 'Drifted')).toMatchObject({ status: 'True', reason: 'DriftDetected' });
    expect(conditionOf(ps.status, 'Ready')).toMatchObject({ status: 'True' });
    expect(await kstatus(ps)).toMatch(/^Current /);
    // waited for, not read once: the gauge mirrors the controller's watch, which may not have brought back the
    // status write read above yet (a first check may have listed one object, so it can still say 1)
    await eventually(
      'packagesync_drifted_objects says 2',
      async () => sample(await scrape(), 'packagesync_drifted_objects', `name="ps",namespace="${ns}"`) === 2,
    );
    await eventually('a DriftDetected event', async () => (await eventReasons(ns, 'ps')).includes('DriftDetected'));
    // nothing was written to the objects
    expect((await get(cmPath(ns, 'settings')))?.metadata.resourceVersion).toBe(cmVersion);
    expect((await get(`/api/v1/namespaces/${ns}/secrets/creds`))?.metadata.resourceVersion).toBe(secretVersion);

    // Correct from now on: reverted, the list and the condition go
    await patchPackageSync(ns, 'ps', { spec: { driftPolicy: 'Correct' } });
    const corrected = await waitReady(ns, 'ps', (p) => !p.status?.drift);
    expect(conditionOf(corrected.status, 'Drifted')).toBeUndefined();
    expect((await get(cmPath(ns, 'settings')))?.data).toEqual({ color: 'blue', size: 's' });
  });

  it("an ignored field (an HPA's replicas) is neither reported, reverted, nor applied over", async () => {
    const ns = await env.namespace('e2e-drift-ignore');
    const { repo, url } = await env.repo('drift-ignore', {
      'd.yaml': deployment('web', { replicas: 1 }),
      'other.yaml': deployment('other', { replicas: 1 }).replace(
        'metadata: {name: other}',
        "metadata: {name: other, annotations: {packagesync.io/ignore-fields: '/spec/replicas'}}",
      ),
    });
    const ignore = [{ paths: ['/spec/replicas'], target: { kind: 'Deployment', name: 'web' } }];
    await env.syncReady(ns, 'ps', quickSpec(url, { ignore }));

    // the HPA's write: the scale subresource, as its own field manager
    const checks = sample(await scrape(), 'packagesync_drift_checks_total') ?? 0;
    await editAs('horizontal-pod-autoscaler', deployPath(ns, 'web'), { spec: { replicas: 4 } }, '/scale');
    await editAs('horizontal-pod-autoscaler', deployPath(ns, 'other'), { spec: { replicas: 3 } }, '/scale');
    await eventually(
      'the watch saw the writes',
      async () => (sample(await scrape(), 'packagesync_drift_checks_total') ?? 0) > checks,
    );
    await sleep(2_000);
    // a new revision changes the image: applied, replicas stay the HPA's
    const sha = await commitFiles(
      repo,
      'main',
      { 'd.yaml': deployment('web', { replicas: 1, image: 'registry.local/web:2' }) },
      'v2',
    );
    await trigger(ns, 'ps');
    const done = await waitReady(ns, 'ps', (p) => p.status?.lastAppliedRevision === `main@sha1:${sha}`);
    expect(done.status?.drift).toBeUndefined();
    expect(done.status?.lastDriftCorrection).toBeUndefined();
    const web = await get(deployPath(ns, 'web'));
    expect((web?.spec as { replicas: number }).replicas).toBe(4);
    expect(JSON.stringify(web?.spec)).toContain('registry.local/web:2');
    expect(((await get(deployPath(ns, 'other')))?.spec as { replicas: number }).replicas).toBe(3);
  });

  it('our own prune is not drift: its delete events queue no check', async () => {
    const ns = await env.namespace('e2e-drift-prune');
    const { repo, url } = await env.repo('drift-prune', {
      'a.yaml': configMap('a', { n: '1' }),
      'b.yaml': configMap('b', { n: '1' }),
    });
    await env.syncReady(ns, 'ps', quickSpec(url));
    const sha = await commitFiles(repo, 'main', { 'b.yaml': null }, 'b leaves the package');
    await trigger(ns, 'ps');
    await waitReady(ns, 'ps', (p) => p.status?.lastAppliedRevision === `main@sha1:${sha}`);
    expect(await get(cmPath(ns, 'b'))).toBeUndefined();
    await sleep(3_000); // the delete event has arrived (it comes before the DELETE's response, or just after)
    // (the drift watch's own debug line, per PackageSync: the counter is the whole controller's)
    const queued = env.controller.logs.filter((l) => l.includes('managed object changed') && l.includes(`"${ns}/ps"`));
    expect(queued).toEqual([]);
  });

  it('a watch event that changed nothing the package sets writes nothing', async () => {
    const ns = await env.namespace('e2e-drift-noop');
    const { url } = await env.repo('drift-noop', { 'cm.yaml': configMap('settings', { color: 'blue' }) });
    const ready = await env.syncReady(ns, 'ps', quickSpec(url));
    await sleep(1_000); // the last status write's echo
    const psVersion = (await getPackageSync(ns, 'ps'))!.metadata.resourceVersion;
    expect(ready).toBeDefined();

    // someone keeps a field of their own on it (an annotation added is not even a reason to look: it cannot be
    // a field the package sets), then changes it: an event on a managed object, no drift
    await editAs('someone', cmPath(ns, 'settings'), { metadata: { annotations: { note: 'mine' } } });
    const checks = sample(await scrape(), 'packagesync_drift_checks_total') ?? 0;
    const cmVersion = await editAs('someone', cmPath(ns, 'settings'), {
      metadata: { annotations: { note: 'theirs' } },
    });
    await eventually(
      'the watch queued a check',
      async () => (sample(await scrape(), 'packagesync_drift_checks_total') ?? 0) > checks,
    );
    await sleep(3_000); // the check runs: it must find nothing and write nothing
    expect((await get(cmPath(ns, 'settings')))?.metadata.resourceVersion).toBe(cmVersion);
    expect((await getPackageSync(ns, 'ps'))!.metadata.resourceVersion).toBe(psVersion);
  });
});
