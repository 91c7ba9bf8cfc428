/**
 * `packagesync why NAME` on the real control plane: a Deployment whose Pods cannot pull their image (kwok's
 * failure stage) — the chain names the Deployment, its ReplicaSet, the Pod, the reason and the image; a
 * PackageSync blocked by a dependsOn names the dependency; a Ready one exits 0. The same chain, bounded, in
 * status.cause (kubectl describe shows it) until a fix clears it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitCondition } from './support/controller.ts';
import { packagesync } from './support/cli.ts';
import { kubectl } from './support/cluster.ts';
import { condition, configMap, deployment, readyAt, stalledOnHealth, watchStatus } from './support/health.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';

let env: GitEnvWithController;
beforeAll(async () => {
  env = await startGitEnv();
});
afterAll(async () => {
  await env?.dispose();
});

describe('packagesync why', () => {
  it('follows a PackageSync to the Pod that cannot pull its image', async () => {
    const ns = await env.namespace('e2e-why-pull');
    const { url } = await env.repo('why-pull', { 'web.yaml': deployment('web', { failure: 'ImagePullBackOff' }) });
    await env.sync(ns, 'pull', { source: { url }, timeout: '120s' });
    await watchStatus(ns, 'pull', stalledOnHealth, 100_000);
    const r = await packagesync('why', 'pull', '-n', ns);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^PackageSync ${ns}/pull  Ready=False HealthCheckFailed: `));
    expect(lines[1]).toMatch(new RegExp(`^└ Deployment/${ns}/web  `));
    expect(lines[2]).toMatch(new RegExp(`^  └ ReplicaSet/${ns}/web-[a-z0-9]+$`));
    expect(lines[3]).toMatch(new RegExp(`^    └ Pod/${ns}/web-[a-z0-9]+-[a-z0-9]+  (ErrImagePull|ImagePullBackOff)`));
    expect(lines[3]).toContain('registry.local/web');
    const json = await packagesync('why', 'pull', '-n', ns, '-o', 'json');
    // the same chain as data (the Pod's message may have moved on meanwhile: ErrImagePull → ImagePullBackOff)
    const parsed = JSON.parse(json.stdout) as { ready: boolean; chain: string[] };
    expect(parsed.ready).toBe(false);
    // (the Ready message names the Pod's reason too, and a retry of the health check may run between the calls)
    expect(parsed.chain[0]).toMatch(new RegExp(`^PackageSync ${ns}/pull  Ready=`));
    expect(parsed.chain.slice(1, 3)).toEqual(lines.slice(1, 3));
    expect(parsed.chain[3]).toContain('registry.local/web');
  });

  it('names a dependsOn that blocks; a Ready PackageSync is one line and exit 0', async () => {
    const ns = await env.namespace('e2e-why-deps');
    const { url } = await env.repo('why-deps', { 'cm.yaml': configMap('c') });
    await env.sync(ns, 'waits', { source: { url }, dependsOn: [{ name: 'infra' }] });
    await waitCondition(ns, 'waits', 'Ready', 'False', 'DependencyNotReady');
    const blocked = await packagesync('why', 'waits', '-n', ns);
    expect(blocked.code).toBe(1);
    expect(blocked.stdout).toBe(
      `PackageSync ${ns}/waits  Ready=False DependencyNotReady: dependency ${ns}/infra does not exist\n` +
        `└ dependsOn ${ns}/infra  not found\n`,
    );

    await env.syncReady(ns, 'ok', { source: { url } });
    const ok = await packagesync('why', 'ok', '-n', ns);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      new RegExp(
        `^PackageSync ${ns}/ok  Ready=True ReconciliationSucceeded: Applied revision main@sha1:[0-9a-f]+: .*\n$`,
      ),
    );
  });
});

describe('status.cause', () => {
  it('names the Pod that cannot pull its image; kubectl describe shows it; a fix clears it', async () => {
    const ns = await env.namespace('e2e-why-status');
    const { repo, url } = await env.repo('why-status', {
      'web.yaml': deployment('web', { failure: 'ImagePullBackOff' }),
    });
    await env.sync(ns, 'pull', { source: { url }, timeout: '120s', retryInterval: '2s' });
    const { last } = await watchStatus(ns, 'pull', stalledOnHealth, 100_000);
    const cause = last.status?.cause ?? [];
    expect(cause.map((l) => l.kind)).toEqual(['Deployment', 'ReplicaSet', 'Pod']);
    expect(cause[0]).toMatchObject({ namespace: ns, name: 'web' });
    const pod = cause[2]!;
    expect(pod.name).toMatch(/^web-[a-z0-9]+-[a-z0-9]+$/);
    expect(pod.reason).toMatch(/^(ErrImagePull|ImagePullBackOff)$/);
    expect(pod.message).toContain('registry.local/web');
    expect(pod.message!.length).toBeLessThanOrEqual(256);
    // the first cause is in the Ready message too
    expect(condition(last, 'Ready')?.message).toMatch(new RegExp(`Pod ${pod.name}: (ErrImagePull|ImagePullBackOff)`));

    const described = await kubectl('describe', 'packagesyncs.packagesync.io', 'pull', '-n', ns);
    expect(described).toMatch(/Cause:\s+Kind:\s+Deployment/);
    expect(described).toMatch(new RegExp(`Name:\\s+${pod.name}`));

    const fixed = await env.commit(repo, { 'web.yaml': deployment('web') });
    const { last: ready } = await watchStatus(ns, 'pull', readyAt(fixed), 100_000);
    expect(ready.status?.cause).toBeUndefined();
  });
});
