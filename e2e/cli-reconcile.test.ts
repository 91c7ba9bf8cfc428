/**
 * `packagesync status | reconcile | suspend | resume` with a real controller: the answers and exit codes
 * scripts rely on, including the requests the controller answers without applying anything (a blocked
 * dependency) and the ones nobody answers (no controller for that shard).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { packagesync } from './support/cli.ts';
import { createPackageSync, getPackageSync, packageSync, waitReady } from './support/controller.ts';
import { configMap, startGitEnv, unboundClaim, type GitEnv } from './support/git-env.ts';

let env: GitEnv;
beforeAll(async () => {
  env = await startGitEnv();
});
afterAll(async () => {
  await env?.dispose();
});

describe.concurrent('packagesync status and reconcile', () => {
  it('summarises one and all, as text and json, exiting 0 only when Ready', async ({ expect }) => {
    const ns = await env.namespace('e2e-cli-status');
    const { url, sha } = await env.repo('status', { 'a.yaml': configMap('a', { k: '1' }) });
    await createPackageSync(
      packageSync(ns, 'web', env.controller!.shard, { source: { url, ref: { branch: 'main' } } }),
    );
    await waitReady(ns, 'web');

    const one = await packagesync('status', 'web', '-n', ns);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain(`PackageSync ${ns}/web\n  Ready:        True (ReconciliationSucceeded)`);
    expect(one.stdout).toContain(`Applied:      main@sha1:${sha}`);
    expect(one.stdout).toContain('Objects:      1 total: 1 current');
    expect(one.stdout).toMatch(/History:\n\s+\d+s ago {2}main@sha1:[0-9a-f]{12} {2}Succeeded/);

    const json = JSON.parse((await packagesync('status', 'web', '-n', ns, '-o', 'json')).stdout);
    expect(json).toMatchObject({ namespace: ns, name: 'web', ready: 'True', upToDate: true, inventoryCount: 1 });

    // suspended too, so that no controller at all (not even an unsharded one) writes its status
    await createPackageSync(packageSync(ns, 'unwatched', 'no-controller-shard', { source: { url }, suspend: true }));
    const table = await packagesync('status', '-n', ns);
    expect(table.code).toBe(1); // `unwatched` is not Ready
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+READY\s+REASON\s+REVISION\s+OBJECTS\s+AGE\s+MESSAGE$/);
    expect(lines[1]).toMatch(/^unwatched\s+Unknown \(suspended\)\s+NotObserved\s+-/);
    expect(lines[2]).toMatch(/^web\s+True\s+ReconciliationSucceeded\s+main@sha1:[0-9a-f]{12}\s+1\/1\s/);

    const missing = await packagesync('status', 'nope', '-n', ns);
    expect([missing.code, missing.stderr]).toEqual([2, `packagesync: PackageSync ${ns}/nope not found\n`]);
  });

  it('reconcile applies a new commit now and exits 0; 1 when the new commit breaks', async ({ expect }) => {
    const ns = await env.namespace('e2e-cli-reconcile');
    const { repo, url } = await env.repo('reconcile', { 'a.yaml': configMap('a', { k: '1' }) });
    await createPackageSync(packageSync(ns, 'web', env.controller!.shard, { source: { url }, interval: '1h' }));
    await waitReady(ns, 'web');

    const sha = await env.commit(repo, { 'a.yaml': configMap('a', { k: '2' }) });
    const ok = await packagesync('reconcile', 'web', '-n', ns, '--timeout', '60s');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      new RegExp(
        `^PackageSync ${ns}/web: Ready=True \\(ReconciliationSucceeded\\) Applied revision main@sha1:${sha}: `,
      ),
    );
    // the answer is for this request: the status already shows the new commit
    expect((await getPackageSync(ns, 'web'))?.status?.lastAppliedRevision).toBe(`main@sha1:${sha}`);

    await env.commit(repo, { 'broken.yaml': 'kind: [unclosed\n' });
    const broken = await packagesync('reconcile', 'web', '-n', ns, '--timeout', '60s');
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/Ready=False \(RenderFailed\) broken\.yaml/);
  });

  it('reconcile is answered when a dependency blocks it (exit 1 at once, not a timeout)', async ({ expect }) => {
    const ns = await env.namespace('e2e-cli-blocked');
    const { url } = await env.repo('blocked', { 'a.yaml': configMap('a', { k: '1' }) });
    await createPackageSync(
      packageSync(ns, 'app', env.controller!.shard, {
        source: { url },
        dependsOn: [{ name: 'infra' }],
        retryInterval: '1h',
      }),
    );
    const r = await packagesync('reconcile', 'app', '-n', ns, '--timeout', '60s');
    expect(r.stdout).toContain(`Ready=False (DependencyNotReady) dependency ${ns}/infra does not exist`);
    expect(r.code).toBe(1);
  });

  it('times out (4) without an answer, and refuses a suspended PackageSync (2)', async ({ expect }) => {
    const ns = await env.namespace('e2e-cli-slow');
    const { url } = await env.repo('slow', { 'claim.yaml': unboundClaim('data') });
    await createPackageSync(packageSync(ns, 'orphan', env.controller!.shard, { source: { url }, timeout: '5m' }));
    const r = await packagesync('reconcile', 'orphan', '-n', ns, '--timeout', '3s');
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/within 3s/);

    expect((await packagesync('suspend', 'orphan', '-n', ns)).code).toBe(0);
    expect((await getPackageSync(ns, 'orphan'))?.spec.suspend).toBe(true);
    const suspended = await packagesync('reconcile', 'orphan', '-n', ns);
    expect([suspended.code, suspended.stderr]).toEqual([
      2,
      `packagesync: PackageSync ${ns}/orphan is suspended: packagesync resume orphan\n`,
    ]);
    const resumed = await packagesync('resume', 'orphan', '-n', ns, '--no-wait');
    expect(resumed.code).toBe(0);
    const after = await getPackageSync(ns, 'orphan');
    expect(after?.spec.suspend).toBe(false);
    expect(after?.metadata.annotations?.['packagesync.io/reconcile-requested-at']).toBeDefined();
    expect((await packagesync('suspend', 'missing', '-n', ns)).code).toBe(2);
  });
});
