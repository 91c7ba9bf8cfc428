/**
 * `packagesync render | diff | apply` against the real control plane, as a user runs them: the exit codes
 * scripts rely on, the diff text, the inventory ConfigMap, prune, and that `render` prints exactly what
 * the controller applies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/core/object.ts';
import { kube } from './support/cluster.ts';
import { packageDir, packagesync } from './support/cli.ts';
import { createPackageSync, getPackageSync, packageSync, waitReady } from './support/controller.ts';
import { configMap, startGitEnv, unboundClaim, type GitEnv } from './support/git-env.ts';
import { get } from './support/safety.ts';

let env: GitEnv;
beforeAll(async () => {
  env = await startGitEnv();
});
afterAll(async () => {
  await env?.dispose();
});

const secret = (name: string, password: string) =>
  `apiVersion: v1\nkind: Secret\nmetadata: {name: ${name}}\nstringData: {password: "${password}"}\n`;

describe.concurrent('packagesync diff and apply', () => {
  it('diffs, applies with an inventory ConfigMap, diffs clean, then prunes what left the package', async ({
    expect,
  }) => {
    const ns = await env.namespace('e2e-cli-apply');
    const pkg = await packageDir({
      'a.yaml': configMap('a', { k: '1' }),
      'b.yaml': configMap('b', { k: '1' }),
      'creds.yaml': secret('creds', 'hunter2'),
    });
    const flags = ['--name', 'app', '-n', ns];

    const first = await packagesync('diff', pkg.dir, ...flags);
    expect([first.code, first.stderr]).toEqual([1, expect.stringContaining('3 to create')]);
    expect(first.stdout).toContain(`--- /dev/null\n+++ merged/v1/ConfigMap/${ns}/a`);
    expect(first.stdout).not.toContain('hunter2');
    expect(first.stderr).toContain('3 to create, 0 to configure, 0 to prune');

    const applied = await packagesync('apply', pkg.dir, ...flags, '--wait', '--timeout', '60s');
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(`ConfigMap/${ns}/a created`);
    expect(applied.stdout).toContain(
      `3 created, 0 unchanged, all healthy (inventory: ConfigMap ${ns}/packagesync-inventory-app, 3 objects)`,
    );
    const inventory = await get(`/api/v1/namespaces/${ns}/configmaps/packagesync-inventory-app`);
    expect(inventory?.data).toEqual({
      [`${ns}_a__ConfigMap`]: 'v1',
      [`${ns}_b__ConfigMap`]: 'v1',
      [`${ns}_creds__Secret`]: 'v1',
    });
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/a`))?.metadata.labels).toMatchObject({
      'packagesync.io/name': 'app',
      'packagesync.io/namespace': ns,
    });

    const clean = await packagesync('diff', pkg.dir, ...flags);
    expect([clean.code, clean.stdout]).toEqual([0, '']);
    expect(clean.stderr).toContain('0 to create, 0 to configure, 0 to prune, 3 unchanged');

    await pkg.write({ 'a.yaml': configMap('a', { k: '2' }), 'b.yaml': null, 'creds.yaml': secret('creds', 'hunter3') });
    const changed = await packagesync('diff', pkg.dir, ...flags);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toContain(`--- live/v1/ConfigMap/${ns}/a\n+++ merged/v1/ConfigMap/${ns}/a`);
    expect(changed.stdout).toMatch(/- {2}k: "1"\n\+ {2}k: "2"/);
    expect(changed.stdout).toContain(`--- live/v1/ConfigMap/${ns}/b\n+++ /dev/null`);
    expect(changed.stdout).toContain("-  password: '*** (before)'\n+  password: '*** (after)'");
    expect(changed.stdout).not.toMatch(/hunter|aHVudGVy/);
    expect(changed.stdout).not.toMatch(/resourceVersion|managedFields|creationTimestamp|uid:/);
    expect(changed.stderr).toContain('0 to create, 2 to configure, 1 to prune');

    const second = await packagesync('apply', pkg.dir, ...flags);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`ConfigMap/${ns}/b pruned`);
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/b`)).toBeUndefined();
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/a`))?.data).toEqual({ k: '2' });
    expect(
      Object.keys((await get(`/api/v1/namespaces/${ns}/configmaps/packagesync-inventory-app`))?.data ?? {}),
    ).toEqual([`${ns}_a__ConfigMap`, `${ns}_creds__Secret`]);

    // someone else takes a field the package sets at the revision applied: drift, which apply takes back (as
    // the controller's driftPolicy Correct does, docs/adr/0022), so diff shows the change taking it back makes
    await (
      await kube()
    ).request('PATCH', `/api/v1/namespaces/${ns}/configmaps/a`, {
      contentType: 'application/merge-patch+json',
      body: { data: { k: 'edited' } },
    });
    const drift = await packagesync('diff', pkg.dir, ...flags);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toMatch(/- {2}k: edited\n\+ {2}k: "2"/);
    await pkg.dispose();
  });

  it('without any inventory, reports objects labelled as the owner’s as prunable', async ({ expect }) => {
    const ns = await env.namespace('e2e-cli-labels');
    await (
      await kube()
    ).request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: {
        metadata: { name: 'orphan', labels: { 'packagesync.io/name': 'lost', 'packagesync.io/namespace': ns } },
        data: { k: 'v' },
      },
    });
    const pkg = await packageDir({ 'a.yaml': configMap('a', { k: '1' }) });
    const r = await packagesync('diff', pkg.dir, '--name', 'lost', '-n', ns);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`--- live/v1/ConfigMap/${ns}/orphan\n+++ /dev/null`);
    expect(r.stderr).toContain(
      `1 to create, 0 to configure, 1 to prune, 0 unchanged (inventory: ConfigMap ${ns}/packagesync-inventory-lost, none yet)`,
    );
    await pkg.dispose();
  });

  it('exits 2 on a package that does not render, and on an object another PackageSync owns', async ({ expect }) => {
    const ns = await env.namespace('e2e-cli-bad');
    const broken = await packageDir({ 'bad.yaml': 'kind: [unclosed\n' });
    const bad = await packagesync('diff', broken.dir, '--name', 'x', '-n', ns);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bad.yaml');
    await (
      await kube()
    ).request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { metadata: { name: 'taken', labels: { 'packagesync.io/name': 'other', 'packagesync.io/namespace': ns } } },
    });
    const pkg = await packageDir({ 'taken.yaml': configMap('taken', { k: '1' }) });
    for (const verb of ['diff', 'apply']) {
      const r = await packagesync(verb, pkg.dir, '--name', 'mine', '-n', ns);
      expect([verb, r.code]).toEqual([verb, 2]);
      expect(r.stderr).toContain(`OwnershipConflict: ConfigMap/${ns}/taken belongs to PackageSync ${ns}/other`);
    }
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/taken`))?.data).toBeUndefined();
    await Promise.all([broken.dispose(), pkg.dispose()]);
  });

  it('exits 4 when --wait runs out of time, and 1 when an object is refused', async ({ expect }) => {
    const ns = await env.namespace('e2e-cli-wait');
    const pkg = await packageDir({ 'claim.yaml': unboundClaim('data') });
    // the claim never binds: only the 4 s budget can end this command, and it must say so with exit 4
    const r = await packagesync('apply', pkg.dir, '--name', 'w', '-n', ns, '--wait', '--timeout', '4s');
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`PersistentVolumeClaim/${ns}/data`);
    const invalid = await packageDir({ 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_Valid}\n' });
    const refused = await packagesync('apply', invalid.dir, '--name', 'w', '-n', ns);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('apply failed: nothing pruned');
    await Promise.all([pkg.dispose(), invalid.dispose()]);
  });
});

describe('packagesync apply on a PackageSync', () => {
  it('refuses while the controller runs it; once suspended, keeps the inventory in its status, which resume prunes', async () => {
    const ns = await env.namespace('e2e-cli-hotfix');
    const { url } = await env.repo('hotfix', { 'a.yaml': configMap('a', { v: 'git' }) });
    await createPackageSync(packageSync(ns, 'web', env.controller!.shard, { source: { url }, interval: '1h' }));
    await waitReady(ns, 'web');
    const pkg = await packageDir({
      'a.yaml': configMap('a', { v: 'hotfix' }),
      'extra.yaml': configMap('extra', { v: '1' }),
    });

    const refused = await packagesync('apply', pkg.dir, '--name', 'web', '-n', ns);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`PackageSync ${ns}/web exists and the controller reconciles it: suspend it first`);
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/extra`)).toBeUndefined();

    expect((await packagesync('suspend', 'web', '-n', ns)).stdout).toBe(`PackageSync ${ns}/web suspended\n`);
    const hotfix = await packagesync('apply', pkg.dir, '--name', 'web', '-n', ns);
    expect(hotfix.code).toBe(0);
    expect(hotfix.stdout).toContain(`(inventory: PackageSync ${ns}/web (status.inventory), 2 objects)`);
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/a`))?.data?.v).toBe('hotfix');
    expect((await getPackageSync(ns, 'web'))?.status?.inventory?.entries.map((e) => e.id)).toEqual([
      `${ns}_a__ConfigMap`,
      `${ns}_extra__ConfigMap`,
    ]);
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/packagesync-inventory-web`)).toBeUndefined();

    // a second hotfix swaps extra for extra2: two status writes in one run (old ∪ new, then the shrunk
    // inventory), the second guarded by the resourceVersion the first returned
    const swap = await packageDir({
      'a.yaml': configMap('a', { v: 'hotfix' }),
      'extra2.yaml': configMap('extra2', { v: '1' }),
    });
    const swapped = await packagesync('apply', swap.dir, '--name', 'web', '-n', ns);
    expect(swapped.code, swapped.stderr).toBe(0);
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/extra`)).toBeUndefined();
    expect((await getPackageSync(ns, 'web'))?.status?.inventory?.entries.map((e) => e.id)).toEqual([
      `${ns}_a__ConfigMap`,
      `${ns}_extra2__ConfigMap`,
    ]);

    // resuming hands back to git: the hotfix is reverted and what only the hotfix added is pruned
    const resumed = await packagesync('resume', 'web', '-n', ns, '--timeout', '60s');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/Ready=True \(ReconciliationSucceeded\)/);
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/a`))?.data?.v).toBe('git');
    expect(await get(`/api/v1/namespaces/${ns}/configmaps/extra2`)).toBeUndefined();
    await Promise.all([pkg.dispose(), swap.dispose()]);
  });

  it('renders exactly what the controller applied: labels, namespaces, digest', async () => {
    const ns = await env.namespace('e2e-cli-render');
    const target = await env.namespace('e2e-cli-render-dst');
    const files = {
      'app/cm.yaml': configMap('settings', { color: 'blue' }),
      'app/other.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: elsewhere, namespace: ${ns}}\ndata: {k: v}\n`,
    };
    const { url } = await env.repo('render', files);
    await createPackageSync(
      packageSync(ns, 'r', env.controller!.shard, { source: { url, path: 'app' }, targetNamespace: target }),
    );
    await waitReady(ns, 'r');
    const pkg = await packageDir(files);
    const r = await packagesync(
      'render',
      `${pkg.dir}/app`,
      '--name',
      'r',
      '--namespace',
      ns,
      '--target-namespace',
      target,
      '-o',
      'json',
    );
    expect([r.code, r.stderr]).toEqual([0, '']);
    const rendered = (JSON.parse(r.stdout) as { items: KubeObject[] }).items;
    expect(rendered.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      `${target}/settings`,
      `${ns}/elsewhere`,
    ]);
    for (const obj of rendered) {
      const live = await get(`/api/v1/namespaces/${obj.metadata.namespace}/configmaps/${obj.metadata.name}`);
      expect(live?.metadata.annotations?.['packagesync.io/digest']).toBe(
        obj.metadata.annotations?.['packagesync.io/digest'],
      );
      expect(live?.metadata.labels).toEqual(obj.metadata.labels);
      expect(live?.data).toEqual(obj.data);
    }
    await pkg.dispose();
  });
});
