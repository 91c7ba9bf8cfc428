/**
 * spec.helm.lookup through the real controller on the real control plane (issue 27, docs/adr/0038): the chart's
 * `lookup` reads the cluster as the PackageSync's ServiceAccount, as `helm install` run as it would. The
 * ServiceAccount may read its own namespace's ConfigMaps — the chart renders from one, and again from its new
 * data at the next periodic check (a lookup never takes the render cache or the unchanged check) — and may not read a Secret
 * in another namespace: Helm's lookup fails there, so the render fails naming the refusal, and the Secret's
 * value shows nowhere. Off, lookup answers nothing, as `helm template`.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kube } from './support/cluster.ts';
import { createPackageSync, packageSync, patchPackageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnv } from './support/git-env.ts';
import { cmPath, get } from './support/safety.ts';

let env: GitEnv;
beforeAll(async () => {
  env = await startGitEnv();
});
afterAll(async () => {
  await env?.dispose();
});

const HIDDEN = `lookup-hidden-${randomBytes(6).toString('hex')}`;

const chart: Record<string, string> = {
  'charts/looks/Chart.yaml': 'apiVersion: v2\nname: looks\nversion: 0.1.0\n',
  'charts/looks/values.yaml': 'secretNamespace: ""\n',
  'charts/looks/templates/cm.yaml': [
    '{{- $src := lookup "v1" "ConfigMap" .Release.Namespace "source" }}',
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: {{ .Release.Name }}-looked-up',
    'data:',
    '  colour: {{ dig "data" "colour" "none" $src | quote }}',
    '  {{- if .Values.secretNamespace }}',
    '  secret: {{ lookup "v1" "Secret" .Values.secretNamespace "hidden" | toJson | quote }}',
    '  {{- end }}',
    '',
  ].join('\n'),
};

/** A namespace whose ServiceAccount `deployer` may edit what is in it (ConfigMaps read included), nothing else. */
async function tenantNamespace(prefix: string): Promise<string> {
  const ns = await env.namespace(prefix);
  const admin = await kube();
  await admin.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { metadata: { name: 'deployer' } } });
  await admin.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    body: {
      metadata: { name: 'deployer-edit' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }],
    },
  });
  return ns;
}

async function putSource(ns: string, colour: string): Promise<void> {
  await (
    await kube()
  ).request('PATCH', cmPath(ns, 'source'), {
    query: { fieldManager: 'e2e', force: 'true' },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'source' }, data: { colour } },
  });
}

describe('spec.helm.lookup', () => {
  it('reads what the identity may read, again on every render, and fails on what it may not', async () => {
    const ns = await tenantNamespace('lookup');
    const vault = await env.namespace('lookup-vault');
    await (
      await kube()
    ).request('POST', `/api/v1/namespaces/${vault}/secrets`, {
      body: { metadata: { name: 'hidden' }, stringData: { token: HIDDEN } },
    });
    await putSource(ns, 'teal');
    const { url } = await env.repo('lookup', chart);
    await createPackageSync(
      packageSync(ns, 'web', env.controller!.shard, {
        source: { url, path: 'charts/looks' },
        serviceAccountName: 'deployer',
        interval: '2s',
        retryInterval: '1s',
        wait: false,
        helm: { lookup: true },
      }),
    );
    await waitReady(ns, 'web');
    expect((await get(cmPath(ns, 'web-looked-up')))?.data).toEqual({ colour: 'teal' });

    // the cluster changed, the commit and spec did not: the next periodic check renders from the new data (the
    // render cache never answers for a package that looks up; nor do the settled-check shortcuts, which this
    // ServiceAccount's package does not take anyway: src/engine/inputs.test.ts)
    await putSource(ns, 'ochre');
    await eventually('rendered again from the new data', async () =>
      (await get(cmPath(ns, 'web-looked-up')))?.data?.colour === 'ochre' ? true : undefined,
    );

    // a Secret of another namespace: deployer may not read it; Helm's lookup fails, and so does the render
    await patchPackageSync(ns, 'web', { spec: { helm: { values: { secretNamespace: vault } } } });
    const failed = await waitCondition(ns, 'web', 'Ready', 'False', 'RenderFailed');
    const message = failed.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '';
    expect(message).toContain('error calling lookup');
    expect(message).toContain(`secrets "hidden" is forbidden: User "system:serviceaccount:${ns}:deployer"`);
    expect((await get(cmPath(ns, 'web-looked-up')))?.data).toEqual({ colour: 'ochre' });
    expect(JSON.stringify(failed.status)).not.toContain(HIDDEN);
    expect(env.controller!.logs.join('\n')).not.toContain(HIDDEN);
  });

  it('off (the default), lookup answers nothing, as helm template', async () => {
    const ns = await tenantNamespace('lookup-off');
    await putSource(ns, 'teal');
    const { url } = await env.repo('lookup-off', chart);
    await createPackageSync(
      packageSync(ns, 'web', env.controller!.shard, {
        source: { url, path: 'charts/looks' },
        serviceAccountName: 'deployer',
        interval: '1h',
        retryInterval: '1s',
        wait: false,
      }),
    );
    await waitReady(ns, 'web');
    expect((await get(cmPath(ns, 'web-looked-up')))?.data).toEqual({ colour: 'none' });
  });
});
