/**
 * One tenant cannot stop the controller for the others (issue 35, docs/adr/0032), on the real API server. Each
 * tenant acts with its own ServiceAccount token and namespaced rights only; the controller runs as a multi-tenant
 * install does (--default-service-account, --no-cross-namespace-refs, no --allow-cross-namespace-objects):
 * - names that would reach a URL or a header are refused at admission (CR/LF in serviceAccountName, "/" in a
 *   secretRef…), with the field named;
 * - a PackageSync whose every request to its cluster hangs (spec.kubeConfig names a server that accepts
 *   connections and never answers) fails alone with a clear reason, while 20 PackageSyncs of another tenant apply
 *   a new commit, and SIGTERM still ends the controller within --shutdown-grace;
 * - a dependsOn in another namespace is InvalidSpec.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeApiError, type KubeClient } from '../src/adapters/kube/client.ts';
import { packageSyncCollectionPath } from '../src/adapters/kube/packagesyncs.ts';
import type { PackageSync, SpecInput } from '../src/api/packagesync.ts';
import { conditionOf } from '../src/core/status.ts';
import { eventually } from './support/cluster.ts';
import { getPackageSync, packageSync, waitCondition, type ControllerHandle } from './support/controller.ts';
import { tenantClient } from './support/tenant.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';

const GRACE_SECONDS = 10;
let env: GitEnv;
let controller: ControllerHandle;
let blackHole: Server;
const held: Socket[] = [];

interface Tenant {
  ns: string;
  client: KubeClient;
  create(name: string, spec: SpecInput): Promise<PackageSync>;
}

/** A namespace and a tenant acting in it with its own token (e2e/support/tenant.ts). */
async function tenant(prefix: string): Promise<Tenant> {
  const ns = await env.namespace(prefix);
  const client = await tenantClient(ns, 'tenant');
  return {
    ns,
    client,
    create: (name, spec) =>
      client.request<PackageSync>('POST', packageSyncCollectionPath(ns), {
        body: packageSync(ns, name, controller.shard, spec),
      }),
  };
}

/** A Secret the tenant writes with its own token. */
const secret = (t: Tenant, name: string, data: Record<string, string>) =>
  t.client.request('POST', `/api/v1/namespaces/${t.ns}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: data },
  });

beforeAll(async () => {
  env = await startGitEnv(false);
  controller = await env.startController({
    allowCrossNamespace: false,
    args: [
      '--default-service-account',
      'deployer',
      '--no-cross-namespace-refs',
      '--concurrency',
      '2',
      '--shutdown-grace',
      `${GRACE_SECONDS}s`,
    ],
  });
  // accepts every connection and never says a word: every request to it hangs until the client gives up
  blackHole = createServer((s) => void held.push(s));
  await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', r));
}, 600_000);

afterAll(async () => {
  for (const s of held) s.destroy();
  blackHole?.close();
  await env?.dispose();
});

let admission: Promise<Tenant> | undefined;

describe('a tenant with namespaced rights only', () => {
  // issue 35: accepted before, the header froze the controller's HTTP pool for every tenant
  it.each([
    ['serviceAccountName', { serviceAccountName: 'deployer\r\nImpersonate-Group: system:masters' }],
    ['serviceAccountName', { serviceAccountName: 'deployer\n' }],
    ['source.secretRef.name', { source: { url: 'http://x/y.git', secretRef: { name: 'other-ns/secret' } } }],
    ['kubeConfig.secretRef.name', { kubeConfig: { secretRef: { name: 'other-ns/secret' } } }],
    ['kubeConfig.secretRef.key', { kubeConfig: { secretRef: { name: 'k', key: '../value' } } }],
    ['helm.valuesFrom[0].name', { helm: { valuesFrom: [{ kind: 'ConfigMap', name: 'other-ns/cm' }] } }],
    ['postBuild.substituteFrom[0].name', { postBuild: { substituteFrom: [{ kind: 'Secret', name: '..' }] } }],
    ['dependsOn[0].namespace', { dependsOn: [{ name: 'a', namespace: 'Team-B' }] }],
    ['decryption.secretRef.name', { decryption: { provider: 'sops', secretRef: { name: 'ключ' } } }],
  ])('is refused at admission: spec.%s', async (field, spec) => {
    const a = await (admission ??= tenant('e2e-admission'));
    const e = await a
      .create('bad', { source: { url: 'http://127.0.0.1:1/x.git' }, ...spec } as SpecInput)
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(KubeApiError);
    expect((e as KubeApiError).status).toBe(422);
    expect((e as KubeApiError).message).toContain(`spec.${field}`);
  });
});

describe('one tenant cannot stop the others', () => {
  it('a PackageSync whose every request hangs fails alone, while 20 of another tenant apply a new commit', async () => {
    const a = await tenant('e2e-hang-a');
    const b = await tenant('e2e-hang-b');
    const { repo, url } = await env.repo('tenant-b', { 'cm.yaml': configMap('cm-${unit}', { v: 'one' }) });
    const units = Array.from({ length: 20 }, (_, i) => `unit-${i}`);
    for (const unit of units) {
      await b.create(unit, {
        source: { url },
        interval: '10s',
        postBuild: { substitute: { unit } },
      });
    }
    const cmValue = async (unit: string) =>
      (
        await b.client
          .request<{ data?: { v?: string } }>('GET', `/api/v1/namespaces/${b.ns}/configmaps/cm-${unit}`)
          .catch(() => undefined)
      )?.data?.v;
    await eventually(
      'tenant b: 20 packages applied',
      async () => (await Promise.all(units.map(cmValue))).every((v) => v === 'one'),
      {
        timeoutMs: 180_000,
      },
    );

    // tenant a: its cluster (spec.kubeConfig) accepts connections and never answers
    await secret(a, 'hang', {
      value: stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          { name: 'h', cluster: { server: `https://127.0.0.1:${(blackHole.address() as AddressInfo).port}` } },
        ],
        users: [{ name: 'h', user: { token: 'not-a-secret' } }],
        contexts: [{ name: 'h', context: { cluster: 'h', user: 'h' } }],
        'current-context': 'h',
      }),
    });
    await a.create('hang', {
      source: { url },
      timeout: '5s',
      retryInterval: '1s',
      kubeConfig: { secretRef: { name: 'hang' } },
      postBuild: { substitute: { unit: 'a' } },
    });
    await eventually('tenant a: its requests hang', async () => held.length > 0, { timeoutMs: 60_000 });

    // a new commit reaches every one of tenant b's packages while tenant a's keeps hanging and retrying
    const two = await env.commit(repo, { 'cm.yaml': configMap('cm-${unit}', { v: 'two' }) });
    await eventually(
      'tenant b: the new commit applied by all 20',
      async () => (await Promise.all(units.map(cmValue))).every((v) => v === 'two'),
      { timeoutMs: 180_000 },
    );

    // tenant a's PackageSync fails alone, saying which cluster did not answer
    const hung = await waitCondition(a.ns, 'hang', 'Ready', 'False', 'RemoteClusterUnreachable', 120_000);
    expect(conditionOf(hung.status, 'Ready')?.message).toContain(`Secret ${a.ns}/hang`);
    // each of b's runs of the new commit ends Ready; waited for, not read once: a unit's ConfigMap is applied
    // before its run's health wait and final status write, so right after the ConfigMaps some still read Unknown
    await eventually(
      'tenant b: all 20 Ready at the new commit',
      async () =>
        (await Promise.all(units.map((u) => getPackageSync(b.ns, u)))).every(
          (ps) =>
            conditionOf(ps?.status, 'Ready')?.status === 'True' &&
            ps?.status?.lastAppliedRevision?.endsWith(two) === true,
        ),
      { timeoutMs: 60_000 },
    );
  });

  it('a dependsOn in another namespace is InvalidSpec (--no-cross-namespace-refs)', async () => {
    const a = await tenant('e2e-xns-a');
    await a.create('app', {
      source: { url: 'http://127.0.0.1:1/x.git' },
      dependsOn: [{ name: 'infra', namespace: 'kube-system' }],
    });
    const ps = await waitCondition(a.ns, 'app', 'Ready', 'False', 'InvalidSpec');
    expect(conditionOf(ps.status, 'Ready')?.message).toContain(
      'spec.dependsOn[0].namespace: kube-system is another namespace',
    );
  });

  // last: it stops the controller. Requests to the black hole are still pending; shutdown does not wait for them.
  it('SIGTERM ends the controller within --shutdown-grace while a tenant hangs', async () => {
    const a = await tenant('e2e-stop-a');
    await secret(a, 'hang', {
      value: stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          { name: 'h', cluster: { server: `https://127.0.0.1:${(blackHole.address() as AddressInfo).port}` } },
        ],
        users: [{ name: 'h', user: { token: 'not-a-secret' } }],
        contexts: [{ name: 'h', context: { cluster: 'h', user: 'h' } }],
        'current-context': 'h',
      }),
    });
    const before = held.length;
    await a.create('hang', {
      source: { url: 'http://127.0.0.1:1/x.git' },
      kubeConfig: { secretRef: { name: 'hang' } },
    });
    await eventually('a request hangs', async () => held.length > before, { timeoutMs: 60_000 });
    const started = Date.now();
    const code = await controller.stop('SIGTERM');
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan((GRACE_SECONDS + 3) * 1000);
  });
});
