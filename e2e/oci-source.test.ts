/**
 * OCI artifacts as a source (issue 17), end to end: the real distribution registry on loopback (TLS from a
 * per-run CA, htpasswd auth), packages published with `packagesync push artifact`, and PackageSyncs with
 * spec.source.oci on the real control plane. Each bad input is a Stalled/failed PackageSync naming the
 * artifact, with nothing applied and nothing pruned.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../src/adapters/oci/registry-client.ts';
import { MediaType } from '../src/core/oci/artifact.ts';
import { parseOciRepository } from '../src/core/oci/reference.ts';
import { startRegistry, type TestRegistry } from '../test/support/oci/registry.ts';
import { packagesync } from './support/cli.ts';
import { kube } from './support/cluster.ts';
import {
  createPackageSync,
  packageSync,
  patchPackageSync,
  waitCondition,
  type ControllerHandle,
} from './support/controller.ts';
import { startGitEnv, type GitEnv } from './support/git-env.ts';
import { watchStatus } from './support/health.ts';
import { cmPath, configMap, get } from './support/safety.ts';
import { tarball } from './support/tarball.ts';

const cli = resolve(import.meta.dirname, '../bin/packagesync.js');
let env: GitEnv;
let controller: ControllerHandle;
let registry: TestRegistry;
let plain: TestRegistry;
let work: string;

beforeAll(async () => {
  [registry, plain] = await Promise.all([startRegistry(), startRegistry({ tls: false })]);
  work = await mkdtemp(join(tmpdir(), 'psync-oci-e2e-'));
  await writeFile(join(work, 'ca.crt'), registry.caCert!);
  env = await startGitEnv(false);
  controller = await env.startController({ args: ['--oci-max-layer-bytes', '20000'] });
}, 600_000);

afterAll(async () => {
  await env?.dispose();
  await Promise.all([registry?.stop(), plain?.stop()]);
  if (work) await rm(work, { recursive: true, force: true });
});

/** `packagesync push artifact` of a directory holding `files`; returns the pushed manifest digest. */
async function push(target: string, files: Record<string, string>, opts: { insecure?: boolean } = {}): Promise<string> {
  const dir = join(work, randomBytes(4).toString('hex'));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  const args = [
    'push',
    'artifact',
    dir,
    target,
    '--source',
    'https://example.com/app.git',
    '--revision',
    'main@sha1:0123',
  ];
  const { stdout } = await promisify(execFile)(
    'node',
    [cli, ...args, ...(opts.insecure ? ['--insecure'] : ['--ca-file', join(work, 'ca.crt')])],
    { env: { ...process.env, PACKAGESYNC_OCI_CREDS: `${registry.username}:${registry.password}` } },
  );
  return /@(sha256:[0-9a-f]{64})/.exec(stdout)![1]!;
}

/** Pushes a hand-made artifact (any layer bytes and media type) with the registry client itself. */
async function pushRaw(repo: string, tag: string, layer: Buffer, mediaType: string): Promise<void> {
  const target = parseOciRepository(`oci://${registry.host}/${repo}`);
  if (!target.ok) throw new Error(target.failure.message);
  const c = new RegistryClient(target.value, {
    auth: { username: registry.username!, password: registry.password!, caCert: registry.caCert! },
  });
  try {
    const config = await c.pushBlob('{}');
    const blob = await c.pushBlob(layer);
    if (!config.ok || !blob.ok) throw new Error('push failed');
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaType.ociManifest,
      config: { mediaType: MediaType.fluxConfig, digest: config.value.digest, size: config.value.size },
      layers: [{ mediaType, digest: blob.value.digest, size: blob.value.size }],
    });
    const pushed = await c.pushManifest(tag, manifest, MediaType.ociManifest);
    if (!pushed.ok) throw new Error(pushed.failure.message);
  } finally {
    await c.close();
  }
}

async function registrySecret(ns: string, name: string, password: string): Promise<void> {
  const auths = { [registry.host]: { auth: Buffer.from(`${registry.username}:${password}`).toString('base64') } };
  await (
    await kube()
  ).request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: {
      metadata: { name },
      type: 'kubernetes.io/dockerconfigjson',
      stringData: { '.dockerconfigjson': JSON.stringify({ auths }), 'ca.crt': registry.caCert },
    },
  });
}

const oci = (
  repo: string,
  ref: Record<string, string> | undefined,
  extra: Record<string, unknown> = {},
  path = '.',
) => ({
  source: {
    path,
    oci: { url: `oci://${registry.host}/${repo}`, secretRef: { name: 'registry' }, ...(ref ? { ref } : {}), ...extra },
  },
  interval: '2s',
  retryInterval: '2s',
});

describe.concurrent('OCI artifact sources', () => {
  it('apply a pushed artifact, then follow a new tag in the semver range; the revision is tag@digest', async () => {
    const ns = await env.namespace('e2e-oci-semver');
    await registrySecret(ns, 'registry', registry.password!);
    const v1 = await push(`oci://${registry.host}/apps/web:v1.0.0`, {
      'deploy/cm.yaml': configMap('web', { version: '1' }),
      'other/cm.yaml': configMap('outside-path', { k: 'v' }),
    });
    await createPackageSync(
      packageSync(ns, 'web', controller.shard, oci('apps/web', { semver: '^1.0.0' }, {}, 'deploy')),
    );
    const first = await watchStatus(ns, 'web', (ps) => ps.status?.lastAppliedRevision === `v1.0.0@${v1}`);
    expect(first.last.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect((await get(cmPath(ns, 'web')))?.data).toEqual({ version: '1' });
    expect(await get(cmPath(ns, 'outside-path'))).toBeUndefined();

    const v11 = await push(`oci://${registry.host}/apps/web:v1.1.0`, {
      'deploy/cm.yaml': configMap('web', { version: '1.1' }),
    });
    await push(`oci://${registry.host}/apps/web:v2.0.0`, { 'deploy/cm.yaml': configMap('web', { version: '2' }) });
    await watchStatus(ns, 'web', (ps) => ps.status?.lastAppliedRevision === `v1.1.0@${v11}`);
    expect((await get(cmPath(ns, 'web')))?.data).toEqual({ version: '1.1' });
  });

  it('a tag pinned to a digest refuses the tag once it moved; the applied revision and objects stand', async () => {
    const ns = await env.namespace('e2e-oci-moved');
    await registrySecret(ns, 'registry', registry.password!);
    const d1 = await push(`oci://${registry.host}/apps/pinned:stable`, { 'cm.yaml': configMap('pinned', { v: '1' }) });
    await createPackageSync(
      packageSync(ns, 'app', controller.shard, oci('apps/pinned', { tag: 'stable', digest: d1 })),
    );
    await watchStatus(ns, 'app', (ps) => ps.status?.lastAppliedRevision === `stable@${d1}`);
    const d2 = await push(`oci://${registry.host}/apps/pinned:stable`, {
      'cm.yaml': configMap('pinned', { v: '2' }),
      'other.yaml': configMap('never-applied', { k: 'v' }),
    });
    const ps = await waitCondition(ns, 'app', 'Stalled', 'True', 'ArtifactTagMoved');
    const message = ps.status!.conditions!.find((c) => c.type === 'Stalled')!.message;
    expect(message).toContain(`oci://${registry.host}/apps/pinned`);
    expect(message).toContain(d1);
    expect(message).toContain(d2);
    expect(ps.status?.lastAppliedRevision).toBe(`stable@${d1}`);
    expect((await get(cmPath(ns, 'pinned')))?.data).toEqual({ v: '1' });
    expect(await get(cmPath(ns, 'never-applied'))).toBeUndefined();
    // a digest alone is pinned: accepting the move is an edit of ref.digest
    await patchPackageSync(ns, 'app', { spec: { source: { oci: { ref: { tag: 'stable', digest: d2 } } } } });
    await watchStatus(ns, 'app', (p) => p.status?.lastAppliedRevision === `stable@${d2}`);
    expect((await get(cmPath(ns, 'pinned')))?.data).toEqual({ v: '2' });
  });

  it('wrong credentials: AuthenticationFailed naming the artifact, no credential in status or events', async () => {
    const ns = await env.namespace('e2e-oci-auth');
    await registrySecret(ns, 'registry', 'not-the-password');
    await push(`oci://${registry.host}/apps/private:v1`, { 'cm.yaml': configMap('private', { k: 'v' }) });
    await createPackageSync(packageSync(ns, 'app', controller.shard, oci('apps/private', { tag: 'v1' })));
    const ps = await waitCondition(ns, 'app', 'Ready', 'False', 'AuthenticationFailed');
    const text = JSON.stringify(ps.status);
    expect(text).toContain(`oci://${registry.host}/apps/private`);
    expect(text).not.toContain('not-the-password');
    expect(text).not.toContain(registry.password!);
    expect(controller.logs.join('\n')).not.toContain('not-the-password');
    expect(await get(cmPath(ns, 'private'))).toBeUndefined();
  });

  it('plan reads a private source as the controller does: secretRef for the login, certSecretRef for the CA', async () => {
    const ns = await env.namespace('e2e-oci-plan');
    const auths = {
      [registry.host]: { auth: Buffer.from(`${registry.username}:${registry.password}`).toString('base64') },
    };
    const client = await kube();
    await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: {
        metadata: { name: 'login' },
        type: 'kubernetes.io/dockerconfigjson',
        stringData: { '.dockerconfigjson': JSON.stringify({ auths }) },
      },
    });
    await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: { metadata: { name: 'registry-ca' }, stringData: { 'ca.crt': registry.caCert } },
    });
    await push(`oci://${registry.host}/apps/planned:v1`, { 'cm.yaml': configMap('planned', { k: 'v' }) });
    // no controller serves this shard: only the plan reads the source
    const spec = {
      source: {
        oci: {
          url: `oci://${registry.host}/apps/planned`,
          ref: { tag: 'v1' },
          secretRef: { name: 'login' },
          certSecretRef: { name: 'registry-ca' },
        },
      },
    };
    await createPackageSync(packageSync(ns, 'app', 'no-controller', spec));
    const plan = await packagesync('plan', 'app', '-n', ns);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(1); // changes, all of which would succeed
    expect(plan.stdout).toMatch(new RegExp(`^Plan for PackageSync ${ns}/app at v1@sha256:[0-9a-f]{64}`));
    expect(plan.stdout).toContain(`create    ConfigMap/${ns}/planned`);
    expect(plan.stdout).not.toContain(registry.password!);
  });

  it.each([
    [
      'a .. entry',
      'dotdot',
      tarball([{ name: '../evil.yaml', content: configMap('evil', { k: 'v' }) }]),
      MediaType.fluxContent,
      'ArtifactUnsafeEntry',
    ],
    [
      'an absolute path',
      'absolute',
      tarball([{ name: '/tmp/evil.yaml', content: configMap('evil', { k: 'v' }) }]),
      MediaType.fluxContent,
      'ArtifactUnsafeEntry',
    ],
    [
      'a link out',
      'linkout',
      tarball([
        { name: 'cm.yaml', content: configMap('evil', { k: 'v' }) },
        { name: 'passwd.yaml', type: '2', link: '../../../../etc/passwd' },
      ]),
      MediaType.ociLayer,
      'ArtifactUnsafeEntry',
    ],
    [
      'a wrong media type',
      'mediatype',
      Buffer.from(configMap('evil', { k: 'v' })),
      'text/plain',
      'ArtifactMediaTypeUnsupported',
    ],
    [
      'a layer over the size limit',
      'toolarge',
      tarball([{ name: 'big.yaml', content: configMap('evil', { k: randomBytes(30_000).toString('base64') }) }]),
      MediaType.fluxContent,
      'ArtifactTooLarge',
    ],
  ])(
    '%s: Stalled with its reason naming the artifact, nothing applied',
    async (_what, repo, layer, mediaType, reason) => {
      const ns = await env.namespace(`e2e-oci-${repo}`);
      await registrySecret(ns, 'registry', registry.password!);
      await pushRaw(`bad/${repo}`, 'v1', layer, mediaType);
      await createPackageSync(packageSync(ns, 'app', controller.shard, oci(`bad/${repo}`, { tag: 'v1' })));
      const ps = await waitCondition(ns, 'app', 'Stalled', 'True', reason);
      expect(ps.status!.conditions!.find((c) => c.type === 'Stalled')!.message).toContain(
        `oci://${registry.host}/bad/${repo}`,
      );
      expect(ps.status?.inventory?.entries ?? []).toEqual([]);
      expect(await get(cmPath(ns, 'evil'))).toBeUndefined();
    },
  );

  it('insecure (plain http) is accepted for a loopback registry', async () => {
    const ns = await env.namespace('e2e-oci-insecure');
    const target = `oci://${plain.host}/apps/open:v1`;
    const digest = await push(target, { 'cm.yaml': configMap('open', { k: 'v' }) }, { insecure: true });
    await createPackageSync(
      packageSync(ns, 'app', controller.shard, {
        source: { oci: { url: `oci://${plain.host}/apps/open`, ref: { tag: 'v1' }, insecure: true } },
      }),
    );
    await watchStatus(ns, 'app', (ps) => ps.status?.lastAppliedRevision === `v1@${digest}`);
    expect(await get(cmPath(ns, 'open'))).toBeDefined();
  });

  it('the CRD admits exactly one of url, oci and chart', async () => {
    const ns = await env.namespace('e2e-oci-crd');
    const both = packageSync(ns, 'both', controller.shard, {
      source: { url: 'https://example.com/x.git', oci: { url: `oci://${registry.host}/x` } },
    });
    await expect(createPackageSync(both)).rejects.toThrow(/exactly one of url \(git\), oci and chart/);
    // issue 33: the chart source is the third kind, exclusive too
    const ociAndChart = packageSync(ns, 'oc', controller.shard, {
      source: { oci: { url: `oci://${registry.host}/x` }, chart: { repository: 'https://c.example', name: 'app' } },
    });
    await expect(createPackageSync(ociAndChart)).rejects.toThrow(/exactly one of url \(git\), oci and chart/);
    const semverAndTag = packageSync(ns, 'st', controller.shard, {
      source: { oci: { url: `oci://${registry.host}/x`, ref: { semver: '1.x', tag: 'v1' } } },
    });
    await expect(createPackageSync(semverAndTag)).rejects.toThrow(/set one of tag, semver, digest/);
  });
});
