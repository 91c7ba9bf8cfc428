/**
 * `packagesync plan packagesyncset/NAME` against real member API servers (issue 31): two members started here
 * (e2e/support/fleet-clusters.ts, hack/cluster.sh member mode) and the local plane are the targets of two waves.
 * Each target is planned in its own cluster (an object only one member holds plans as an update there and as a
 * create on the other), grouped by wave in rollout order, and nothing is written anywhere; a registered cluster
 * that does not answer is named and counted while the others are still planned (exit 7). No controller runs: the
 * plan is the CLI's own reading, with the set controller's functions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanDocument } from '../src/core/plan/plan-render.ts';
import type { SetPlanDocument } from '../src/core/rollout/set-plan.ts';
import { freePort } from '../test/support/local-tools.ts';
import { packagesync } from './support/cli.ts';
import { SHARD_LABEL } from './support/controller.ts';
import {
  localKubeconfigText,
  registerCluster,
  startFleet,
  type Fleet,
  type MemberCluster,
} from './support/fleet-clusters.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';
import { children, createSet } from './support/rollout.ts';

let fx: GitEnv;
let fleet: Fleet;

beforeAll(async () => {
  [fx, fleet] = await Promise.all([startGitEnv(false), startFleet(['c1', 'c2'])]);
}, 300_000);

afterAll(async () => {
  await fx?.dispose();
  await fleet?.down();
}, 120_000);

const ids = (doc: PlanDocument | undefined, action: string) =>
  (doc?.actions ?? []).filter((a) => a.action === action).map((a) => a.id);

/** Set `web` over every registered cluster, in a shard no controller of the suite watches: only the CLI reads it. */
const setBody = (url: string, ns: string, waves: unknown[]) => ({
  apiVersion: 'packagesync.io/v1alpha1',
  kind: 'PackageSyncSet',
  metadata: { name: 'web', labels: { [SHARD_LABEL]: 'nobody' } },
  spec: {
    template: { spec: { source: { url, ref: { branch: 'main' } }, interval: '1m', targetNamespace: ns } },
    generators: { clusters: {} },
    rollout: { waves },
  },
});

describe('packagesync plan packagesyncset/NAME', () => {
  it(
    'plans every target in its own cluster, by wave in rollout order; an unreachable cluster is named and counted',
    { timeout: 300_000 },
    async () => {
      const [c1, c2] = fleet.members as [MemberCluster, MemberCluster];
      const ns = await fx.namespace('set-plan');
      await Promise.all(
        fleet.members.map((m) => m.client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })),
      );
      await registerCluster(ns, 'local', localKubeconfigText(), { ring: 'canary' });
      await registerCluster(ns, 'c1', c1.kubeconfigText, { ring: 'main' });
      await registerCluster(ns, 'c2', c2.kubeconfigText, { ring: 'main' });
      const { url, sha } = await fx.repo('set-plan', {
        'web.yaml': configMap('web', { v: '1' }),
        'extra.yaml': configMap('extra', { v: '1' }),
      });
      // only c1 already holds `web` (same value: no conflict with the field manager that made it)
      await c1.client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        body: { metadata: { name: 'web' }, data: { v: '1' } },
      });
      await createSet(
        ns,
        setBody(url, ns, [
          { name: 'canary', targets: { selector: { matchLabels: { ring: 'canary' } } } },
          { name: 'main' },
        ]),
      );

      const json = await packagesync('plan', 'packagesyncset/web', '-n', ns, '--allow-insecure-http', '-o', 'json');
      expect(json.code, json.stderr).toBe(1); // changes, none would fail
      const doc = JSON.parse(json.stdout) as SetPlanDocument;
      expect(doc.kind).toBe('SetPlan');
      expect(doc.revision).toBe(`main@sha1:${sha}`);
      expect(doc.waves.map((w) => [w.name, w.targets.map((t) => t.name)])).toEqual([
        ['canary', ['local']],
        ['main', ['c1', 'c2']],
      ]);
      expect(doc.counts).toEqual({ targets: 3, planned: 3, changed: 3, wouldFail: 0, unreachable: 0 });
      const [local, p1, p2] = doc.waves.flatMap((w) => w.targets);
      // each target's plan is its own child's, stamped as the set controller stamps it
      expect(local!.plan!.packageSync).toEqual({ namespace: ns, name: 'web-local' });
      expect(p1!.plan!.packageSync).toEqual({ namespace: ns, name: 'web-c1' });
      expect(p1!.plan!.source.revision).toContain(sha);
      // planned against each target's own cluster
      expect(ids(p1!.plan, 'update')).toEqual([`ConfigMap/${ns}/web`]);
      expect(ids(p1!.plan, 'create')).toEqual([`ConfigMap/${ns}/extra`]);
      expect(ids(p2!.plan, 'create').sort()).toEqual([`ConfigMap/${ns}/extra`, `ConfigMap/${ns}/web`]);
      expect(ids(local!.plan, 'create').sort()).toEqual([`ConfigMap/${ns}/extra`, `ConfigMap/${ns}/web`]);
      // a plan writes nothing: no child, nothing on a member
      expect(await children(ns, 'web')).toEqual([]);
      await expect(c2.client.request('GET', `/api/v1/namespaces/${ns}/configmaps/web`)).rejects.toThrow();

      // a cluster registered whose API server does not answer (nothing listens on its port)
      const dead = `https://127.0.0.1:${await freePort()}`;
      await registerCluster(ns, 'c3', c2.kubeconfigText.replace(/server: \S+/, `server: ${dead}`), { ring: 'main' });
      const text = await packagesync('plan', 'pkset/web', '-n', ns, '--allow-insecure-http');
      expect(text.code, text.stderr).toBe(7);
      const out = text.stdout;
      expect(out).toContain(`# Plan for PackageSyncSet ${ns}/web at main@sha1:${sha}: 4 targets in 2 waves`);
      const at = (s: string) => out.indexOf(s);
      expect(at('== wave 1 of 2: canary — 1 target: 1 planned (1 with changes)')).toBeGreaterThan(0);
      expect(at('== wave 2 of 2: main — 3 targets: 2 planned (2 with changes), 1 unreachable')).toBeGreaterThan(
        at('-- target local'),
      );
      // the per-object text of `plan NAME`, under each target
      const c2Part = out.slice(at('-- target c2'), at('-- target c3'));
      expect(c2Part).toContain(`Plan for PackageSync ${ns}/web-c2 at`);
      expect(c2Part).toContain(`+   create    ConfigMap/${ns}/web`);
      expect(out.slice(at('-- target c3'))).toMatch(/Not planned \(unreachable\): .*(ECONNREFUSED|fetch failed)/);
      expect(out).toContain('Summary: 4 targets: 3 planned (3 with changes), 1 unreachable; unreachable: c3');
    },
  );

  it('a namespace with no registered cluster: says so, plans nothing (exit 0)', async () => {
    // the API server lists no match as `"items": null` in metadata form: the CLI read it as an array and threw
    const ns = await fx.namespace('set-plan-none');
    const { url } = await fx.repo('set-plan-none', { 'web.yaml': configMap('web', { v: '1' }) });
    await createSet(ns, setBody(url, ns, [{ name: 'all' }]));
    const r = await packagesync('plan', 'packagesyncset/web', '-n', ns, '--allow-insecure-http');
    expect(r.stderr).toContain('no target: no kubeconfig Secret labelled packagesync.io/secret-type=cluster');
    expect(r.code).toBe(0);
  });

  it('refuses flags that plan one PackageSync, and a set that does not exist (exit 2)', async () => {
    const ns = await fx.namespace('set-plan-bad');
    const [flags, missing] = await Promise.all([
      packagesync('plan', 'packagesyncset/web', '-n', ns, '--ref', 'main'),
      packagesync('plan', 'packagesyncset/none', '-n', ns),
    ]);
    expect([flags.code, missing.code]).toEqual([2, 2]);
    expect(flags.stderr).toContain('--url, --ref and --dir plan one PackageSync');
    expect(missing.stderr).toContain(`PackageSyncSet ${ns}/none not found`);
  });
});
