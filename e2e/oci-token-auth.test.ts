/**
 * The OCI source against a registry with token auth (issue 17): the real distribution registry configured with
 * `auth: token` (realm, service, issuer, rootcertbundle) sends every client to a token server
 * (test/support/oci/token-server.ts, RS256 JWTs as distribution v3 verifies them): the `WWW-Authenticate:
 * Bearer realm=…` flow of Docker Hub, GHCR and ECR. `packagesync push artifact` and the controller go through it;
 * wrong credentials are a clear condition with nothing applied; no token, password or refresh token ever reaches
 * status, events or logs.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../test/support/oci/registry.ts';
import { kube, kubectl } from './support/cluster.ts';
import { createPackageSync, packageSync, waitCondition, type ControllerHandle } from './support/controller.ts';
import { startGitEnv, type GitEnv } from './support/git-env.ts';
import { cmPath, configMap, get } from './support/safety.ts';

const cli = resolve(import.meta.dirname, '../bin/packagesync.js');
let env: GitEnv;
let controller: ControllerHandle;
let registry: TestRegistry;
let work: string;

beforeAll(async () => {
  registry = await startRegistry({ auth: 'token' });
  work = await mkdtemp(join(tmpdir(), 'psync-oci-token-'));
  await writeFile(join(work, 'ca.crt'), registry.caCert!);
  env = await startGitEnv(false);
  controller = await env.startController();
}, 600_000);

afterAll(async () => {
  await env?.dispose();
  await registry?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** `packagesync push artifact` with the registry user's credentials: through the token server too. */
async function push(repo: string, files: Record<string, string>): Promise<string> {
  const dir = join(work, randomBytes(4).toString('hex'));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  const target = `oci://${registry.host}/${repo}`;
  const { stdout } = await promisify(execFile)(
    'node',
    [cli, 'push', 'artifact', dir, target, '--revision', 'main@sha1:0123', '--ca-file', join(work, 'ca.crt')],
    { env: { ...process.env, PACKAGESYNC_OCI_CREDS: `${registry.username}:${registry.password}` } },
  );
  return /@(sha256:[0-9a-f]{64})/.exec(stdout)![1]!;
}

/** A dockerconfigjson Secret for the registry with this auths entry, and the run's CA. */
async function registrySecret(ns: string, entry: Record<string, string>): Promise<void> {
  await (
    await kube()
  ).request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: {
      metadata: { name: 'registry' },
      type: 'kubernetes.io/dockerconfigjson',
      stringData: {
        '.dockerconfigjson': JSON.stringify({ auths: { [registry.host]: entry } }),
        'ca.crt': registry.caCert,
      },
    },
  });
}

const basic = (password: string) => ({ auth: Buffer.from(`${registry.username}:${password}`).toString('base64') });

const spec = (repo: string) => ({
  source: { oci: { url: `oci://${registry.host}/${repo}`, secretRef: { name: 'registry' }, ref: { tag: 'v1' } } },
  interval: '1h',
  retryInterval: '2s',
});

/** Status, events and the controller's logs, where no credential and no token may appear. */
async function everythingSaid(ns: string, status: unknown): Promise<string> {
  const events = await kubectl('get', 'events', '-n', ns, '-o', 'json');
  return [JSON.stringify(status), events, controller.logs.join('\n')].join('\n');
}

function expectNoSecrets(text: string, ...more: string[]): void {
  expect(registry.tokens!.issued.length).toBeGreaterThan(0);
  for (const token of registry.tokens!.issued) expect(text).not.toContain(token.split('.')[2]); // a signature
  for (const s of [registry.password!, registry.tokens!.identityToken, ...more]) expect(text).not.toContain(s);
}

describe.concurrent('OCI source, registry with token (Bearer) auth', () => {
  it('pulls with the right credentials through the token server and applies', async () => {
    const ns = await env.namespace('e2e-oci-token');
    const digest = await push('apps/token-web:v1', { 'cm.yaml': configMap('web', { v: '1' }) });
    await registrySecret(ns, basic(registry.password!));
    await createPackageSync(packageSync(ns, 'app', controller.shard, spec('apps/token-web')));
    const ps = await waitCondition(ns, 'app', 'Ready', 'True');
    expect(ps.status?.lastAppliedRevision).toBe(`v1@${digest}`);
    expect((await get(cmPath(ns, 'web')))?.data).toEqual({ v: '1' });
    expectNoSecrets(await everythingSaid(ns, ps.status));
  });

  it('wrong credentials: the token server refuses them, AuthenticationFailed naming the artifact, nothing applied', async () => {
    const ns = await env.namespace('e2e-oci-token-wrong');
    await push('apps/token-private:v1', { 'cm.yaml': configMap('private', { k: 'v' }) });
    const refusedBefore = registry.tokens!.refused.count;
    await registrySecret(ns, basic('not-the-password'));
    await createPackageSync(packageSync(ns, 'app', controller.shard, spec('apps/token-private')));
    const ps = await waitCondition(ns, 'app', 'Ready', 'False', 'AuthenticationFailed');
    const message = ps.status!.conditions!.find((c) => c.type === 'Ready')!.message;
    expect(message).toContain(`oci://${registry.host}/apps/token-private`);
    expect(message).toContain('refused the credentials');
    expect(registry.tokens!.refused.count).toBeGreaterThan(refusedBefore);
    expect(ps.status?.inventory?.entries ?? []).toEqual([]);
    expect(await get(cmPath(ns, 'private'))).toBeUndefined();
    expectNoSecrets(await everythingSaid(ns, ps.status), 'not-the-password');
  });

  // The identitytoken of a docker config was read but never sent: the token server was asked anonymously, and
  // the pull was refused.
  it('a docker login identity token is sent as the OAuth2 refresh token, and pulls', async () => {
    const ns = await env.namespace('e2e-oci-token-identity');
    const digest = await push('apps/token-identity:v1', { 'cm.yaml': configMap('identity', { v: '1' }) });
    await registrySecret(ns, { identitytoken: registry.tokens!.identityToken });
    await createPackageSync(packageSync(ns, 'app', controller.shard, spec('apps/token-identity')));
    const ps = await waitCondition(ns, 'app', 'Ready', 'True');
    expect(ps.status?.lastAppliedRevision).toBe(`v1@${digest}`);
    expect((await get(cmPath(ns, 'identity')))?.data).toEqual({ v: '1' });
    expectNoSecrets(await everythingSaid(ns, ps.status));
  });
});
