/**
 * `packagesync approve SET --wave W` and `packagesync resume packagesyncset/SET` on the real control plane (issue
 * 31), and deploy/optional/approver-policy.yaml binding the approver's name to the API server's own
 * (request.userInfo.username): a ServiceAccount approving as someone else is refused with the policy's message,
 * the CLI approving as it is accepted and status.waves[].approvedBy names it. The policy is installed under this
 * file's own name and bound only to the namespaces this file labels, so other files' approvals are never checked.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { KubeApiError, KubeClient } from '../src/adapters/kube/client.ts';
import { callerName } from '../src/adapters/kube/self-subject-review.ts';
import type { KubeObject } from '../src/core/object.ts';
import { eventually, kube, uniqueName } from './support/cluster.ts';
import { packagesync, type CliResult } from './support/cli.ts';
import { SHARD_LABEL } from './support/controller.ts';
import { suiteCluster } from './support/deploy-rbac.ts';
import { localKubeconfigText, registerCluster } from './support/fleet-clusters.ts';
import { configMap, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { createSet, getSet, setsPath, waitSet } from './support/rollout.ts';

const root = resolve(import.meta.dirname, '..');
const LABEL = 'e2e.packagesync.io/approver-policy';
const id = uniqueName('ap');
const VAP = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
const BINDING = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';
let fx: GitEnvWithController;
let dir: string;

/** The shipped policy and binding, renamed for this file and bound to the namespaces labelled with its id. */
function testPolicy(): { path: string; body: KubeObject }[] {
  const docs = parseAllDocuments(readFileSync(resolve(root, 'deploy/optional/approver-policy.yaml'), 'utf8')).map(
    (d) => d.toJS() as KubeObject & { spec: Record<string, unknown> },
  );
  return docs.map((d) => {
    const body = { ...d, metadata: { ...d.metadata, name: `packagesync-approver-${id}` } };
    if (d.kind === 'ValidatingAdmissionPolicy') return { path: VAP, body };
    return {
      path: BINDING,
      body: {
        ...body,
        spec: {
          ...d.spec,
          policyName: `packagesync-approver-${id}`,
          matchResources: { namespaceSelector: { matchLabels: { [LABEL]: id } } },
        },
      },
    };
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'psync-approve-'));
  fx = await startGitEnv();
  const admin = await kube();
  for (const { path, body } of testPolicy()) await admin.request('POST', path, { body });
}, 120_000);

afterAll(async () => {
  const admin = await kube();
  await admin.request('DELETE', `${BINDING}/packagesync-approver-${id}`).catch(() => undefined);
  await admin.request('DELETE', `${VAP}/packagesync-approver-${id}`).catch(() => undefined);
  await fx?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** `packagesync ARGS --kubeconfig <path>`: the CLI as another user. */
function packagesyncAs(config: string, ...args: string[]): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [resolve(root, 'bin/packagesync.js'), ...args, '--kubeconfig', config],
      { timeout: 120_000 },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** ServiceAccount `sa` of `ns` allowed to read and annotate PackageSyncSets there; its own kubeconfig file. */
async function approver(ns: string, sa: string): Promise<string> {
  const admin = await kube();
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
  await admin.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { metadata: { name: sa } } });
  await admin.request('POST', `${rbac}/roles`, {
    body: {
      metadata: { name: 'approver' },
      rules: [{ apiGroups: ['packagesync.io'], resources: ['packagesyncsets'], verbs: ['get', 'list', 'patch'] }],
    },
  });
  await admin.request('POST', `${rbac}/rolebindings`, {
    body: {
      metadata: { name: 'approver' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'approver' },
      subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
    },
  });
  const { status } = await admin.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`,
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } } },
  );
  const cluster = await suiteCluster();
  const path = join(dir, `${ns}-${sa}.kubeconfig`);
  await writeFile(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [cluster],
      users: [{ name: sa, user: { token: status.token } }],
      contexts: [{ name: sa, context: { cluster: cluster.name, user: sa, namespace: ns } }],
      'current-context': sa,
    }),
    { mode: 0o600 },
  );
  return path;
}

const patchSetAs = (client: KubeClient, ns: string, annotations: Record<string, string>) =>
  client.request('PATCH', `${setsPath(ns)}/web`, {
    contentType: 'application/merge-patch+json',
    body: { metadata: { annotations } },
  });

const setBody = (url: string, ns: string, waves: unknown[]) => ({
  apiVersion: 'packagesync.io/v1alpha1',
  kind: 'PackageSyncSet',
  metadata: { name: 'web', labels: { [SHARD_LABEL]: fx.controller.shard } },
  spec: {
    template: {
      spec: { source: { url, ref: { branch: 'main' } }, interval: '3s', timeout: '10s', targetNamespace: ns },
    },
    generators: { clusters: {} },
    rollout: { onFailure: 'hold', waves },
  },
});

describe('packagesync approve with the approver policy', () => {
  it('refuses a ServiceAccount approving as someone else; the CLI approves as the caller and status names it', async () => {
    const ns = await fx.namespace('approve');
    await (
      await kube()
    ).request('PATCH', `/api/v1/namespaces/${ns}`, {
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { [LABEL]: id } } },
    });
    await registerCluster(ns, 'local', localKubeconfigText());
    const { url, sha } = await fx.repo('approve', { 'cm.yaml': configMap('web', { v: '1' }) });
    await createSet(ns, setBody(url, ns, [{ name: 'canary', gates: [{ name: 'owner', approval: {} }] }]));
    // the API server's policy informers take a moment: a dry-run write says when the policy acts here
    const admin = await kube();
    await eventually(
      'the approver policy acts on this namespace',
      () =>
        admin
          .request('PATCH', `${setsPath(ns)}/web`, {
            query: { dryRun: 'All' },
            contentType: 'application/merge-patch+json',
            body: { metadata: { annotations: { 'packagesync.io/approve': `canary@${sha}:nobody-${id}` } } },
          })
          .then(
            () => false,
            (e: unknown) => e instanceof KubeApiError && e.status === 403,
          ),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // its CEL type-checks against the PackageSyncSet schema without a warning
    const checked = await eventually('the policy type-checked', async () => {
      const vap = await admin.request<{ status?: { observedGeneration?: number; typeChecking?: unknown } }>(
        'GET',
        `${VAP}/packagesync-approver-${id}`,
      );
      return vap.status?.observedGeneration === 1 && vap.status;
    });
    expect(checked.typeChecking).toEqual({});
    const config = await approver(ns, 'approver');
    const me = `system:serviceaccount:${ns}:approver`;
    const asApprover = await KubeClient.create({ kubeconfig: config });
    try {
      await waitSet(
        ns,
        'web',
        'the canary at its approval gate',
        (s) => s.status?.blockedBy?.reason === 'WaitingForApproval',
      );

      // someone else's name, by a plain write: the API server refuses it with the policy's message
      for (const key of ['packagesync.io/approve', 'packagesync.io/resume']) {
        const refused = await patchSetAs(asApprover, ns, { [key]: `canary@${sha}:alice` }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(refused, key).toBeInstanceOf(KubeApiError);
        expect((refused as KubeApiError).status).toBe(403);
        expect((refused as KubeApiError).message).toContain(`${key} is signed by whoever writes it`);
        expect((refused as KubeApiError).message).toContain(`<wave>@<commit>:${me}`);
      }
      // a name that only ends in the caller's: refused too (the recorded who would be `mallory:<me>`)
      await expect(
        patchSetAs(asApprover, ns, { 'packagesync.io/approve': `canary@${sha}:mallory:${me}` }),
      ).rejects.toThrow(/signed by whoever writes it/);
      expect((await getSet(ns, 'web')).metadata.annotations?.['packagesync.io/approve']).toBeUndefined();

      // a wave that does not exist: nothing written
      const wrongWave = await packagesyncAs(config, 'approve', 'web', '--wave', 'nope', '-n', ns);
      const approved = await packagesyncAs(config, 'approve', 'packagesyncset/web', '--wave', 'canary', '-n', ns);
      expect(wrongWave.code).toBe(2);
      expect(wrongWave.stderr).toContain('has no wave nope; its waves: canary');
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toContain(`packagesync.io/approve=canary@${sha}:${me}`);

      const done = await waitSet(
        ns,
        'web',
        'the rollout through its only wave',
        (s) => s.status?.phase === 'Succeeded',
      );
      expect(done.status!.waves![0]).toMatchObject({ name: 'canary', phase: 'Succeeded', approvedBy: me });
    } finally {
      await asApprover.close();
    }
  });
});

describe('packagesync resume packagesyncset/NAME', () => {
  it('resumes the held wave as the caller, waits for the controller to act, and resumes it again when it held again', async () => {
    const ns = await fx.namespace('approve-resume');
    // a registered cluster that does not answer: with nothing to revert to, the rollout holds
    await registerCluster(ns, 'gone', localKubeconfigText().replace(/server: \S+/, 'server: https://127.0.0.1:9'));
    const { url, sha } = await fx.repo('approve-resume', { 'cm.yaml': configMap('web', { v: '1' }) });
    await createSet(ns, setBody(url, ns, [{ name: 'only' }]));
    await waitSet(ns, 'web', 'the rollout held', (s) => s.status?.phase === 'Holding', 90_000);
    const me = await callerName(await kube());

    const resumed = await packagesync('resume', 'packagesyncset/web', '-n', ns, '--timeout', '60s');
    expect(resumed.code, resumed.stderr).toBe(0);
    const s = await getSet(ns, 'web');
    expect(s.status!.lastHandledResume).toBe(`only@${sha}:${me}`);
    expect(s.status!.waves![0]).toMatchObject({ resumedBy: me, attempt: 1 });

    // the cluster still does not answer: held again. The same person resumes again: the same value would be
    // ignored, so the CLI writes the whole revision (as the web UI does), and the controller acts on it
    await waitSet(ns, 'web', 'held again', (x) => x.status?.phase === 'Holding', 90_000);
    const again = await packagesync('resume', 'pkset/web', '-n', ns, '--timeout', '60s');
    expect(again.code, again.stderr).toBe(0);
    const s2 = await getSet(ns, 'web');
    expect(s2.status!.lastHandledResume).toBe(`only@${s2.status!.revision}:${me}`);
    expect(s2.status!.waves![0]).toMatchObject({ resumedBy: me, attempt: 2 });
    // a set that is not holding has nothing to resume; a wave it does not hold at is refused
    const wrong = await packagesync('resume', 'packagesyncset/web', '-n', ns, '--wave', 'other', '--no-wait');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('holds at wave only, not other');
  });
});
