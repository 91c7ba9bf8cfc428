/**
 * `packagesync plan NAME` on the real control plane, compared with what `packagesync apply` then does:
 * creates, field-level updates (Secret values masked), prunes, a workload whose Pods would roll; a field
 * owned by another manager (409), an admission rejection (a ValidatingAdmissionPolicy), immutable fields
 * (a Service's clusterIP, a Job's template) and the dependent a failure would hold back; `apply
 * --plan-digest` accepted while the plan stands and refused, writing nothing, once the cluster changed;
 * the git source (spec.source, --url/--ref).
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageSync } from '../src/api/packagesync.ts';
import type { PlanDocument } from '../src/core/plan/plan-render.ts';
import { eventually, kube } from './support/cluster.ts';
import { packageDir, packagesync } from './support/cli.ts';
import { createPackageSync, packageSync } from './support/controller.ts';
import { startGitEnv, type GitEnv } from './support/git-env.ts';
import { cmPath, configMap, deployment, get } from './support/safety.ts';

let env: GitEnv;
beforeAll(async () => {
  env = await startGitEnv(false);
});
afterAll(async () => {
  await env?.dispose();
});

const secret = (name: string, password: string) =>
  `apiVersion: v1\nkind: Secret\nmetadata: {name: ${name}}\nstringData: {password: "${password}"}\n`;

/** A suspended PackageSync: `packagesync apply` keeps its inventory in its status, no controller runs it. */
async function suspended(ns: string, name: string, url = 'https://git.invalid/none.git'): Promise<void> {
  const ps = packageSync(ns, name, 'none', { source: { url }, suspend: true });
  await createPackageSync(ps as PackageSync);
}

async function planJson(...args: string[]): Promise<{ code: number; doc: PlanDocument; stderr: string }> {
  const r = await packagesync('plan', ...args, '-o', 'json');
  if (!r.stdout) throw new Error(`plan printed nothing (exit ${r.code}): ${r.stderr}`);
  return { code: r.code, doc: JSON.parse(r.stdout) as PlanDocument, stderr: r.stderr };
}

const idsOf = (doc: PlanDocument, action: string) => doc.actions.filter((a) => a.action === action).map((a) => a.id);

/** `ConfigMap/ns/a created` lines of `packagesync apply` → ids per action. */
const appliedIds = (stdout: string, action: string) =>
  stdout
    .split('\n')
    .filter((l) => l.endsWith(` ${action}`))
    .map((l) => l.slice(0, -action.length - 1))
    .sort();

describe('packagesync plan', () => {
  // a dozen CLI runs, each a Node process: a budget for a loaded machine, not a timing assertion
  it(
    'plans creates, updates and prunes exactly as apply then does them; --plan-digest holds the apply to the plan',
    { timeout: 480_000 },
    async () => {
      const ns = await env.namespace('e2e-plan');
      await suspended(ns, 'app');
      const pkg = await packageDir({
        'a.yaml': configMap('a', { k: '1' }),
        'b.yaml': configMap('b', { k: '1' }),
        'creds.yaml': secret('creds', 'hunter2'),
        'web.yaml': deployment('web'),
      });
      const flags = ['-n', ns, '--dir', pkg.dir];
      const applyFlags = ['--name', 'app', '-n', ns];

      // read-only commands run side by side: each is a Node process, slow on a loaded machine
      const [first, again] = await Promise.all([planJson('app', ...flags), planJson('app', ...flags)]);
      expect(first.code).toBe(1);
      expect(first.doc.wouldFail).toBe(false);
      expect(idsOf(first.doc, 'create').sort()).toEqual(
        [`ConfigMap/${ns}/a`, `ConfigMap/${ns}/b`, `Secret/${ns}/creds`, `Deployment/${ns}/web`].sort(),
      );
      expect(first.doc.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      // the same plan twice is the same digest: nothing in it depends on time
      expect(again.doc.digest).toBe(first.doc.digest);

      const applied = await packagesync('apply', pkg.dir, ...applyFlags, '--plan-digest', first.doc.digest);
      expect([applied.code, applied.stderr]).toEqual([0, '']);
      expect(appliedIds(applied.stdout, 'created')).toEqual(idsOf(first.doc, 'create').sort());

      const clean = await packagesync('plan', 'app', ...flags);
      expect(clean.code).toBe(0);
      expect(clean.stdout).toContain('No changes.');
      expect(clean.stdout).toContain('4 unchanged');

      await pkg.write({
        'a.yaml': configMap('a', { k: '2' }),
        'b.yaml': null,
        'creds.yaml': secret('creds', 'hunter3'),
        'web.yaml': deployment('web', { image: 'registry.local/web:2' }),
      });
      const [second, text, md] = await Promise.all([
        planJson('app', ...flags),
        packagesync('plan', 'app', ...flags),
        packagesync('plan', 'app', ...flags, '-o', 'markdown'),
      ]);
      expect(second.code).toBe(1);
      expect(idsOf(second.doc, 'update').sort()).toEqual(
        [`ConfigMap/${ns}/a`, `Secret/${ns}/creds`, `Deployment/${ns}/web`].sort(),
      );
      expect(idsOf(second.doc, 'prune')).toEqual([`ConfigMap/${ns}/b`]);
      const byId = new Map(second.doc.actions.map((a) => [a.id, a]));
      expect(byId.get(`ConfigMap/${ns}/a`)?.changes).toEqual([{ path: '.data.k', old: '"1"', new: '"2"' }]);
      expect(byId.get(`Secret/${ns}/creds`)?.changes).toEqual([
        { path: '.data.password', old: '"*** (changed)"', new: '"*** (changed)"' },
      ]);
      const web = byId.get(`Deployment/${ns}/web`)!;
      expect(web.rolls).toBe(true);
      expect(web.changes).toContainEqual({
        path: '.spec.template.spec.containers[0].image',
        old: '"registry.local/web:1"',
        new: '"registry.local/web:2"',
      });
      expect(second.doc.summary).toMatchObject({ update: 3, prune: 1, rolls: 1, unchanged: 0 });

      expect(text.code).toBe(1);
      // the file, and its line since render keeps it (issue 15 item 5)
      expect(text.stdout).toContain(`~   update    Deployment/${ns}/web  (web.yaml:1)  Pods would roll`);
      expect(text.stdout).toContain('.data.k: "1" → "2"');
      expect(text.stdout).toContain(`-   prune     ConfigMap/${ns}/b`);
      // text and markdown end with the same line, naming the digest json carries (docs/cli.md)
      expect(second.doc.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      for (const out of [text.stdout, md.stdout])
        expect(out.trimEnd().split('\n').at(-1)).toBe(`Plan digest: ${second.doc.digest}`);
      expect(md.stdout).toContain('| 0 | 3 | 0 | 1 | 0 | 0 | 0 | 0 | 0 | 1 |');
      expect(md.stdout).toContain('<details><summary>Details</summary>');
      for (const out of [text.stdout, md.stdout, JSON.stringify(second.doc)])
        expect(out).not.toMatch(/hunter|aHVudGVy/);

      const wrong = await packagesync('apply', pkg.dir, ...applyFlags, '--plan-digest', first.doc.digest);
      expect(wrong.code).toBe(6);
      expect(wrong.stderr).toContain(`the plan changed since it was approved: it is now ${second.doc.digest}`);
      expect((await get(cmPath(ns, 'b')))?.data).toEqual({ k: '1' }); // nothing written

      const second2 = await packagesync('apply', pkg.dir, ...applyFlags, '--plan-digest', second.doc.digest);
      expect([second2.code, second2.stderr]).toEqual([0, '']);
      expect(appliedIds(second2.stdout, 'configured')).toEqual(idsOf(second.doc, 'update').sort());
      expect(appliedIds(second2.stdout, 'pruned')).toEqual(idsOf(second.doc, 'prune'));
      expect(await get(cmPath(ns, 'b'))).toBeUndefined();

      // approved, then someone else edits a field of the package: the plan is no longer the approved one
      await pkg.write({ 'a.yaml': configMap('a', { k: '3' }) });
      const third = await planJson('app', ...flags);
      expect(third.code).toBe(1);
      await (
        await kube()
      ).request('PATCH', cmPath(ns, 'a'), {
        contentType: 'application/merge-patch+json',
        query: { fieldManager: 'someone-else' },
        body: { data: { k: 'theirs' } },
      });
      const refused = await packagesync('apply', pkg.dir, ...applyFlags, '--plan-digest', third.doc.digest);
      expect(refused.code).toBe(6);
      expect(refused.stderr).toContain('nothing was applied');
      expect((await get(cmPath(ns, 'a')))?.data).toEqual({ k: 'theirs' });
      // and the plan now says why: the field belongs to another manager, and applying would fail
      const conflicted = await planJson('app', ...flags);
      expect(conflicted.code).toBe(5);
      expect(conflicted.doc.wouldFail).toBe(true);
      expect(conflicted.doc.actions).toContainEqual(
        expect.objectContaining({
          action: 'conflict',
          id: `ConfigMap/${ns}/a`,
          conflicts: [{ manager: 'someone-else', field: '.data.k' }],
        }),
      );
      await pkg.dispose();
    },
  );

  it(
    'says what would fail: an admission rejection, immutable fields, and the dependent it holds back',
    { timeout: 300_000 },
    async () => {
      const ns = await env.namespace('e2e-plan-fail');
      const policy = `e2e-plan-deny-${ns}`;
      await denyPolicy(ns, policy);
      try {
        await suspended(ns, 'app');
        const ip = (n: number) => `10.96.${randomInt(100, 250)}.${n}`;
        const first = ip(randomInt(2, 120));
        const pkg = await packageDir({
          'svc.yaml': service('svc', first),
          'job.yaml': job('migrate', 'registry.local/migrate:1'),
          'ok.yaml': configMap('ok', { k: '1' }),
        });
        const applyFlags = ['--name', 'app', '-n', ns];
        const created = await packagesync('apply', pkg.dir, ...applyFlags);
        expect([created.code, created.stderr]).toEqual([0, '']);

        await pkg.write({
          'svc.yaml': service('svc', first.replace(/\.\d+$/, `.${randomInt(121, 250)}`)),
          'job.yaml': job('migrate', 'registry.local/migrate:2'),
          'ok.yaml': configMap('ok', { k: '2' }),
          'denied.yaml': configMap('denied', { k: '1' }, '  labels: {e2e.packagesync.io/deny: "true"}\n'),
          'after.yaml': configMap(
            'after',
            { k: '1' },
            `  annotations: {config.kubernetes.io/depends-on: /namespaces/${ns}/ConfigMap/denied}\n`,
          ),
        });
        const [{ code, doc }, text] = await Promise.all([
          planJson('app', '-n', ns, '--dir', pkg.dir),
          packagesync('plan', 'app', '-n', ns, '--dir', pkg.dir),
        ]);
        expect(code).toBe(5);
        expect(doc.wouldFail).toBe(true);
        const byId = new Map(doc.actions.map((a) => [a.id, a]));
        expect(byId.get(`Service/${ns}/svc`)).toMatchObject({ action: 'immutable', fields: ['spec.clusterIPs[0]'] });
        expect(byId.get(`Job/${ns}/migrate`)).toMatchObject({ action: 'immutable', fields: ['spec.template'] });
        expect(byId.get(`ConfigMap/${ns}/denied`)).toMatchObject({ action: 'reject' });
        expect(byId.get(`ConfigMap/${ns}/denied`)?.message).toContain('denied by the e2e plan policy');
        expect(byId.get(`ConfigMap/${ns}/after`)).toMatchObject({
          action: 'skip',
          dependsOn: `ConfigMap/${ns}/denied`,
        });
        expect(byId.get(`ConfigMap/${ns}/ok`)).toMatchObject({ action: 'update' });
        expect(text.stdout).toContain('The apply would fail');

        // apply does what the plan said: the four marked objects fail or are skipped, the rest is applied
        const applied = await packagesync('apply', pkg.dir, ...applyFlags);
        expect(applied.code).toBe(1);
        expect(applied.stdout).toContain(`ConfigMap/${ns}/ok configured`);
        expect(applied.stderr).toContain(`ImmutableFieldChange: Service/${ns}/svc`);
        expect(applied.stderr).toContain(`ImmutableFieldChange: Job/${ns}/migrate`);
        expect(applied.stderr).toContain('denied by the e2e plan policy');
        expect(applied.stderr).toMatch(new RegExp(`DependencyFailed: ConfigMap/${ns}/after .*skipped`));
        expect(await get(cmPath(ns, 'after'))).toBeUndefined();
        await pkg.dispose();
      } finally {
        const client = await kube();
        const vap = '/apis/admissionregistration.k8s.io/v1';
        await client.request('DELETE', `${vap}/validatingadmissionpolicybindings/${policy}`).catch(() => undefined);
        await client.request('DELETE', `${vap}/validatingadmissionpolicies/${policy}`).catch(() => undefined);
      }
    },
  );

  it(
    "plans the PackageSync's own git source, or another ref, as its ServiceAccount",
    { timeout: 300_000 },
    async () => {
      const ns = await env.namespace('e2e-plan-git');
      const { repo, url, sha } = await env.repo('plan-git', { 'a.yaml': configMap('a', { k: '1' }) });
      await env.commit(repo, { 'b.yaml': configMap('b', { k: '1' }) });
      const ps = packageSync(ns, 'app', 'none', { source: { url, ref: { commit: sha } }, suspend: true });
      await createPackageSync(ps as PackageSync);

      const [own, branch, refused, missing] = await Promise.all([
        planJson('app', '-n', ns, '--allow-insecure-http'),
        planJson('app', '-n', ns, '--url', url, '--ref', 'main', '--allow-insecure-http'),
        packagesync('plan', 'app', '-n', ns),
        packagesync('plan', 'nope', '-n', ns),
      ]);
      expect(own.code).toBe(1);
      expect(own.doc.source).toEqual({ revision: `sha1:${sha}`, url });
      expect(idsOf(own.doc, 'create')).toEqual([`ConfigMap/${ns}/a`]);

      expect(branch.doc.source.revision).toMatch(/^main@sha1:[0-9a-f]{40}$/);
      expect(idsOf(branch.doc, 'create').sort()).toEqual([`ConfigMap/${ns}/a`, `ConfigMap/${ns}/b`]);

      expect(refused.code).toBe(2); // http:// without --allow-insecure-http, as the controller refuses it
      expect([missing.code, missing.stderr]).toEqual([2, expect.stringContaining(`PackageSync ${ns}/nope not found`)]);

      // as the controller would: the PackageSync's ServiceAccount, whose RBAC here grants nothing
      const asSa = packageSync(ns, 'tenant', 'none', {
        source: { url, ref: { commit: sha } },
        suspend: true,
        serviceAccountName: 'nobody',
      });
      await createPackageSync(asSa as PackageSync);
      const forbidden = await packagesync('plan', 'tenant', '-n', ns, '--allow-insecure-http');
      expect(forbidden.code).toBe(3);
      expect(forbidden.stderr).toContain(`system:serviceaccount:${ns}:nobody`);
    },
  );
});

const service = (name: string, clusterIP: string) =>
  [
    'apiVersion: v1',
    'kind: Service',
    `metadata: {name: ${name}}`,
    `spec: {clusterIP: "${clusterIP}", selector: {app: ${name}}, ports: [{port: 80}]}`,
    '',
  ].join('\n');

const job = (name: string, image: string) =>
  [
    'apiVersion: batch/v1',
    'kind: Job',
    `metadata: {name: ${name}}`,
    'spec:',
    '  template:',
    `    spec: {restartPolicy: Never, containers: [{name: app, image: "${image}"}]}`,
    '',
  ].join('\n');

/** A ValidatingAdmissionPolicy refusing ConfigMaps labelled e2e.packagesync.io/deny in one namespace. */
async function denyPolicy(ns: string, name: string): Promise<void> {
  const client = await kube();
  const base = '/apis/admissionregistration.k8s.io/v1';
  await client.request('POST', `${base}/validatingadmissionpolicies`, {
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] },
          ],
        },
        validations: [
          {
            expression: "!has(object.metadata.labels) || !('e2e.packagesync.io/deny' in object.metadata.labels)",
            message: 'denied by the e2e plan policy',
          },
        ],
      },
    },
  });
  await client.request('POST', `${base}/validatingadmissionpolicybindings`, {
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name },
      spec: {
        policyName: name,
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
      },
    },
  });
  // the policy takes effect a moment after it is stored: wait until a dry run is refused
  await eventually('the deny policy to take effect', async () => {
    try {
      await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        query: { dryRun: 'All' },
        body: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'probe', labels: { 'e2e.packagesync.io/deny': 'true' } },
        },
      });
      return false;
    } catch {
      return true;
    }
  });
}
