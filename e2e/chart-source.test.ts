/**
 * Helm charts from a chart repository (issue 33, docs/adr/0041), end to end: a Helm HTTP repository on
 * loopback (charts packaged by the pinned `helm package`, indexed by `helm repo index`, served by a plain static
 * server with basic auth), PackageSyncs with spec.source.chart on the real control plane, fetched and rendered
 * by the pinned helm under the render sandbox.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { RECONCILE_REQUESTED_AT } from '../src/api/packagesync.ts';
import { defaultToolPaths } from '../src/config/tool-paths.ts';
import { packagesync } from './support/cli.ts';
import { kube } from './support/cluster.ts';
import { createPackageSync, packageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, get } from './support/safety.ts';
import { tarball } from './support/tarball.ts';

const run = promisify(execFile);
const helm = defaultToolPaths().helm;
const USER = 'charts-reader';
const PASSWORD = `pw-${randomBytes(8).toString('hex')}`;
const WRONG = `wrong-${randomBytes(8).toString('hex')}`;

let env: GitEnvWithController;
let work: string;
let served: string;
let server: Server;
let base: string;
/** Requests the repository answered, with whether they carried the right credentials. */
const requests: { path: string; authorised: boolean }[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'psync-chart-e2e-'));
  served = join(work, 'repo');
  await mkdir(served);
  server = createServer((req, res) => {
    const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
    const authorised = req.headers.authorization === expected;
    const path = normalize(decodeURIComponent((req.url ?? '/').split('?')[0]!)).replace(/^(\.\.[/\\])+/, '');
    requests.push({ path, authorised });
    if (!authorised) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="charts"' }).end();
      return;
    }
    readFile(join(served, path)).then(
      (body) => res.writeHead(200).end(body),
      () => res.writeHead(404).end(),
    );
  });
  // every address: the insecure-http test reaches it by this machine's address that is not loopback
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  env = await startGitEnv();
}, 600_000);

afterAll(async () => {
  await env?.dispose();
  await new Promise((resolve) => server?.close(resolve));
  if (work) await rm(work, { recursive: true, force: true });
});

/** `helm package` of a chart at `version` into the served directory, then `helm repo index`; its sha256. */
async function publish(name: string, version: string): Promise<string> {
  const chart = join(work, `${name}-${version}`, name);
  await mkdir(join(chart, 'templates'), { recursive: true });
  await writeFile(join(chart, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: ${version}\n`);
  await writeFile(join(chart, 'values.yaml'), 'greeting: hello\n');
  await writeFile(
    join(chart, 'templates', 'cm.yaml'),
    [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: {{ .Release.Name }}-config',
      'data:',
      '  version: {{ .Chart.Version | quote }}',
      '  greeting: {{ .Values.greeting | quote }}',
      '',
    ].join('\n'),
  );
  const toolEnv = { PATH: process.env.PATH ?? '', HOME: work, HELM_CACHE_HOME: join(work, '.helm-cache') };
  await run(helm, ['package', chart, '--destination', served], { env: toolEnv });
  await run(helm, ['repo', 'index', served], { env: toolEnv });
  return createHash('sha256')
    .update(await readFile(join(served, `${name}-${version}.tgz`)))
    .digest('hex');
}

async function secret(ns: string, password: string): Promise<void> {
  const client = await kube();
  const body = { metadata: { name: 'charts' }, stringData: { username: USER, password } };
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body }).catch(async () => {
    await client.request('PUT', `/api/v1/namespaces/${ns}/secrets/charts`, { body });
  });
}

describe('chart sources', () => {
  it('installs by semver range, follows a new version on request, and keeps what it applied on a wrong password', async () => {
    const ns = await env.namespace('e2e-chart');
    await secret(ns, PASSWORD);
    const v100 = await publish('app', '1.0.0');
    await publish('app', '2.0.0'); // outside the range: never applied
    await createPackageSync(
      packageSync(ns, 'web', env.controller.shard, {
        source: {
          chart: {
            repository: base,
            name: 'app',
            version: '>=1.0.0 <2.0.0',
            secretRef: { name: 'charts' },
            insecure: true,
          },
        },
        interval: '1h',
        retryInterval: '1s',
        wait: false,
        helm: { values: { greeting: 'hi' } },
      }),
    );
    await waitReady(ns, 'web', (ps) => ps.status?.lastAppliedRevision === `1.0.0@sha256:${v100}`);
    expect((await get(cmPath(ns, 'web-config')))?.data).toEqual({ version: '1.0.0', greeting: 'hi' });
    expect(requests.some((r) => r.path.endsWith('index.yaml') && r.authorised)).toBe(true);

    // a new version in the range, published; a reconcile requested (the interval is an hour)
    const v110 = await publish('app', '1.1.0');
    const client = await kube();
    const requestedAt = new Date().toISOString();
    await client.request('PATCH', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs/web`, {
      body: { metadata: { annotations: { [RECONCILE_REQUESTED_AT]: requestedAt } } },
      contentType: 'application/merge-patch+json',
    });
    await waitReady(ns, 'web', (ps) => ps.status?.lastAppliedRevision === `1.1.0@sha256:${v110}`);
    expect((await get(cmPath(ns, 'web-config')))?.data).toEqual({ version: '1.1.0', greeting: 'hi' });

    // a wrong password: AuthenticationFailed, nothing pruned, no password anywhere it could be read
    await secret(ns, WRONG);
    const failed = await waitCondition(ns, 'web', 'Ready', 'False', 'AuthenticationFailed');
    const message = failed.status!.conditions!.find((c) => c.type === 'Ready')!.message;
    expect(message).toContain(base);
    expect(message).toContain('spec.source.chart.secretRef');
    expect(failed.status?.lastAppliedRevision).toBe(`1.1.0@sha256:${v110}`);
    expect((await get(cmPath(ns, 'web-config')))?.data).toEqual({ version: '1.1.0', greeting: 'hi' });
    const events = await client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/events`);
    for (const text of [JSON.stringify(failed.status), JSON.stringify(events.items), env.controller.logs.join('\n')]) {
      expect(text).not.toContain(WRONG);
      expect(text).not.toContain(PASSWORD);
    }
  });

  it('plan reads the chart source as the controller does: the version the range picks now, before anything applies', async () => {
    const ns = await env.namespace('e2e-chart-plan');
    await secret(ns, PASSWORD);
    const v200 = createHash('sha256')
      .update(await readFile(join(served, 'app-2.0.0.tgz')))
      .digest('hex');
    // no controller serves this shard: only the plan reads the source
    await createPackageSync(
      packageSync(ns, 'web', 'no-controller', {
        source: {
          chart: { repository: base, name: 'app', version: '^2.0.0', secretRef: { name: 'charts' }, insecure: true },
        },
      }),
    );
    const plan = await packagesync('plan', 'web', '-n', ns);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(1); // changes, all of which would succeed
    expect(plan.stdout).toMatch(new RegExp(`^Plan for PackageSync ${ns}/web at 2\\.0\\.0@sha256:${v200}`));
    expect(plan.stdout).toContain(`create    ConfigMap/${ns}/web-config`);
    expect(plan.stdout).not.toContain(PASSWORD);
  });

  it('reads valuesFiles from a git repository beside the chart ($values): a values commit is a new revision, applied', async () => {
    const ns = await env.namespace('e2e-chart-values');
    await secret(ns, PASSWORD);
    const v100 = await publish('app', '1.0.0');
    const { repo, url, sha } = await env.repo('chart-values', { 'env/prod.yaml': 'greeting: from-git\n' });
    await createPackageSync(
      packageSync(ns, 'web', env.controller.shard, {
        source: {
          chart: {
            repository: base,
            name: 'app',
            version: '1.0.0',
            secretRef: { name: 'charts' },
            insecure: true,
            values: { url, ref: { branch: 'main' } },
          },
        },
        interval: '1h',
        retryInterval: '1s',
        wait: false,
        helm: { valuesFiles: ['$values/env/prod.yaml'] },
      }),
    );
    await waitReady(ns, 'web', (ps) => ps.status?.lastAppliedRevision === `1.0.0@sha256:${v100}+main@sha1:${sha}`);
    expect((await get(cmPath(ns, 'web-config')))?.data).toEqual({ version: '1.0.0', greeting: 'from-git' });

    const next = await env.commit(repo, { 'env/prod.yaml': 'greeting: changed-in-git\n' });
    const client = await kube();
    await client.request('PATCH', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs/web`, {
      body: { metadata: { annotations: { [RECONCILE_REQUESTED_AT]: new Date().toISOString() } } },
      contentType: 'application/merge-patch+json',
    });
    await waitReady(ns, 'web', (ps) => ps.status?.lastAppliedRevision === `1.0.0@sha256:${v100}+main@sha1:${next}`);
    expect((await get(cmPath(ns, 'web-config')))?.data).toEqual({ version: '1.0.0', greeting: 'changed-in-git' });
  });

  // the checks of OCI layers (core/oci/tar-entries.ts) guard chart archives too: helm pull only downloads
  it.each([
    ['a .. entry', 'dotdot', [{ name: '../escape.yaml', content: 'x: 1\n' }]],
    [
      'a symlink out of the chart',
      'linkout',
      [{ name: 'linkout/templates/x.yaml', type: '2' as const, link: '/etc/passwd' }],
    ],
  ])('refuses an archive with %s: ArtifactUnsafeEntry, nothing unpacked or applied', async (_, name, bad) => {
    const ns = await env.namespace(`e2e-chart-${name}`);
    await secret(ns, PASSWORD);
    const archive = tarball([
      { name: `${name}/Chart.yaml`, content: `apiVersion: v2\nname: ${name}\nversion: 1.0.0\n` },
      { name: `${name}/templates/cm.yaml`, content: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: never}\n' },
      ...bad,
    ]);
    await writeFile(join(served, `${name}-1.0.0.tgz`), archive);
    // helm repo index would refuse to read it: the entry goes into the index by hand (test data only)
    const index = parse(await readFile(join(served, 'index.yaml'), 'utf8')) as { entries: Record<string, unknown[]> };
    index.entries[name] = [
      { apiVersion: 'v2', name, version: '1.0.0', urls: [`${name}-1.0.0.tgz`], created: new Date().toISOString() },
    ];
    await writeFile(join(served, 'index.yaml'), stringify(index));
    await createPackageSync(
      packageSync(ns, 'web', env.controller.shard, {
        source: { chart: { repository: base, name, version: '1.0.0', secretRef: { name: 'charts' }, insecure: true } },
        interval: '1h',
      }),
    );
    const ps = await waitCondition(ns, 'web', 'Stalled', 'True', 'ArtifactUnsafeEntry');
    expect(ps.status!.conditions!.find((c) => c.type === 'Stalled')!.message).toContain(`chart ${name}`);
    expect(await get(cmPath(ns, 'never'))).toBeUndefined();
  });

  it('refuses plain http to a host that is not loopback, naming the field; nothing is fetched', async () => {
    const ns = await env.namespace('e2e-chart-insecure');
    // this machine's own address that is not loopback reaches the served repository: a fetch would be seen,
    // under a path of this test's alone (the other tests' PackageSyncs keep polling theirs)
    const host = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    if (!host) throw new Error('this test needs an IPv4 address that is not loopback (none found)');
    const repository = `http://${host}:${new URL(base).port}/${ns}`;
    await createPackageSync(
      packageSync(ns, 'web', env.controller.shard, {
        source: { chart: { repository, name: 'app', insecure: true } },
        interval: '1h',
      }),
    );
    const ps = await waitCondition(ns, 'web', 'Stalled', 'True', 'InvalidURL');
    expect(ps.status!.conditions!.find((c) => c.type === 'Stalled')!.message).toContain('spec.source.chart.insecure');
    expect(requests.filter((r) => r.path.includes(ns))).toEqual([]);
  });
});
