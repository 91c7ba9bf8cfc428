/**
 * Helm charts from an OCI registry (issue 33, docs/adr/0041), end to end: the real distribution registry on
 * loopback (TLS from a per-run CA, htpasswd auth), charts pushed by the pinned `helm push`, PackageSyncs with
 * spec.source.chart.repository `oci://…` on the real control plane, a semver range resolved by the pinned helm
 * against the registry's tags, credentials from a kubernetes.io/dockerconfigjson Secret.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECONCILE_REQUESTED_AT } from '../src/api/packagesync.ts';
import { defaultToolPaths } from '../src/config/tool-paths.ts';
import { startRegistry, type TestRegistry } from '../test/support/oci/registry.ts';
import { kube } from './support/cluster.ts';
import { createPackageSync, packageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, get } from './support/safety.ts';

const run = promisify(execFile);
const helm = defaultToolPaths().helm;

let env: GitEnvWithController;
let registry: TestRegistry;
let work: string;

beforeAll(async () => {
  registry = await startRegistry();
  work = await mkdtemp(join(tmpdir(), 'psync-chart-oci-e2e-'));
  await writeFile(join(work, 'ca.crt'), registry.caCert!);
  // the pusher's own registry config (the test's, never the controller's)
  await writeFile(join(work, 'registry.json'), dockerConfig(registry.username!, registry.password!));
  env = await startGitEnv();
}, 600_000);

afterAll(async () => {
  await env?.dispose();
  await registry?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

function dockerConfig(username: string, password: string): string {
  const auth = Buffer.from(`${username}:${password}`).toString('base64');
  return JSON.stringify({ auths: { [registry.host]: { auth } } });
}

/** `helm package` of a one-ConfigMap chart, `helm push` to oci://<registry>/charts: the manifest digest. */
async function pushChart(name: string, version: string): Promise<string> {
  const chart = join(work, `${name}-${version}`, name);
  await mkdir(join(chart, 'templates'), { recursive: true });
  await writeFile(join(chart, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: ${version}\n`);
  await writeFile(join(chart, 'values.yaml'), 'greeting: hello\n');
  await writeFile(
    join(chart, 'templates', 'cm.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n' +
      '  version: {{ .Chart.Version | quote }}\n  greeting: {{ .Values.greeting | quote }}\n',
  );
  const toolEnv = {
    PATH: process.env.PATH ?? '',
    HOME: work,
    HELM_CACHE_HOME: join(work, '.helm-cache'),
    HELM_REGISTRY_CONFIG: join(work, 'registry.json'),
  };
  const out = join(work, 'packaged');
  await run(helm, ['package', chart, '--destination', out], { env: toolEnv });
  const pushed = await run(
    helm,
    ['push', join(out, `${name}-${version}.tgz`), `oci://${registry.host}/charts`, '--ca-file', join(work, 'ca.crt')],
    { env: toolEnv },
  );
  return /Digest: sha256:([0-9a-f]{64})/.exec(`${pushed.stdout}\n${pushed.stderr}`)![1]!;
}

async function secret(ns: string, password: string): Promise<void> {
  const client = await kube();
  const body = {
    metadata: { name: 'registry' },
    type: 'kubernetes.io/dockerconfigjson',
    stringData: { '.dockerconfigjson': dockerConfig(registry.username!, password), 'ca.crt': registry.caCert! },
  };
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body }).catch(async () => {
    await client.request('PUT', `/api/v1/namespaces/${ns}/secrets/registry`, { body });
  });
}

describe('OCI chart sources', () => {
  it('installs by semver range from the registry tags, follows a new version, keeps what it applied on a wrong password', async () => {
    const ns = await env.namespace('e2e-chart-oci');
    await secret(ns, registry.password!);
    const v100 = await pushChart('app', '1.0.0');
    await pushChart('app', '2.0.0'); // outside the range: never applied
    await createPackageSync(
      packageSync(ns, 'web', env.controller.shard, {
        source: {
          chart: {
            repository: `oci://${registry.host}/charts`,
            name: 'app',
            version: '>=1.0.0 <2.0.0',
            secretRef: { name: 'registry' },
          },
        },
        interval: '1h',
        retryInterval: '1s',
        wait: false,
        helm: { values: { greeting: 'hi' } },
      }),
    );
    // the revision as Flux shows an OCI chart: the version (the tag) and the manifest digest
    await waitReady(ns, 'web', (ps) => ps.status?.lastAppliedRevision === `1.0.0@sha256:${v100}`);
    expect((await get(cmPath(ns, 'web-config')))?.data).toEqual({ version: '1.0.0', greeting: 'hi' });

    const v110 = await pushChart('app', '1.1.0');
    const client = await kube();
    await client.request('PATCH', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs/web`, {
      body: { metadata: { annotations: { [RECONCILE_REQUESTED_AT]: new Date().toISOString() } } },
      contentType: 'application/merge-patch+json',
    });
    await waitReady(ns, 'web', (ps) => ps.status?.lastAppliedRevision === `1.1.0@sha256:${v110}`);
    expect((await get(cmPath(ns, 'web-config')))?.data).toEqual({ version: '1.1.0', greeting: 'hi' });

    const wrong = `wrong-${randomBytes(8).toString('hex')}`;
    await secret(ns, wrong);
    const failed = await waitCondition(ns, 'web', 'Ready', 'False', 'AuthenticationFailed');
    const message = failed.status!.conditions!.find((c) => c.type === 'Ready')!.message;
    expect(message).toContain(`oci://${registry.host}/charts`);
    expect(failed.status?.lastAppliedRevision).toBe(`1.1.0@sha256:${v110}`);
    expect((await get(cmPath(ns, 'web-config')))?.data).toEqual({ version: '1.1.0', greeting: 'hi' });
    const events = await client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/events`);
    for (const text of [JSON.stringify(failed.status), JSON.stringify(events.items), env.controller.logs.join('\n')]) {
      expect(text).not.toContain(wrong);
      expect(text).not.toContain(registry.password!);
    }
  });

  it('a range no tag matches is RefNotFound naming the field; nothing applied', async () => {
    const ns = await env.namespace('e2e-chart-oci-none');
    await secret(ns, registry.password!);
    await pushChart('other', '1.0.0');
    await createPackageSync(
      packageSync(ns, 'web', env.controller.shard, {
        source: {
          chart: {
            repository: `oci://${registry.host}/charts`,
            name: 'other',
            version: '^3.0.0',
            secretRef: { name: 'registry' },
          },
        },
        interval: '1h',
        retryInterval: '1s',
      }),
    );
    const ps = await waitCondition(ns, 'web', 'Ready', 'False', 'RefNotFound');
    expect(ps.status!.conditions!.find((c) => c.type === 'Ready')!.message).toContain('spec.source.chart');
    expect(await get(cmPath(ns, 'web-config'))).toBeUndefined();
  });
});
