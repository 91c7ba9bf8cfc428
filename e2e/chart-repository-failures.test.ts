/**
 * What a Helm repository can do wrong (issue 33, docs/adr/0041), end to end against a static repository on
 * loopback (basic auth, charts packaged by the pinned `helm package`, indexed by `helm repo index`): a version
 * removed from the index fails clearly and leaves the applied objects; an archive changed behind its index is
 * refused; a download redirected to another host reaches it without the repository's credentials.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECONCILE_REQUESTED_AT } from '../src/api/packagesync.ts';
import { defaultToolPaths } from '../src/config/tool-paths.ts';
import { kube } from './support/cluster.ts';
import { createPackageSync, packageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, get } from './support/safety.ts';

const run = promisify(execFile);
const helm = defaultToolPaths().helm;
const USER = 'charts-reader';
const PASSWORD = `pw-${randomBytes(8).toString('hex')}`;

let env: GitEnvWithController;
let work: string;
let repoDir: string;
let otherDir: string;
let repo: Server;
let other: Server;
let base: string;
/** Paths the repository redirects to the other host (127.0.0.2, same port: the fetch's sandbox allows one port). */
const redirected = new Set<string>();
/** What the other host was asked, with the Authorization header it got (undefined when none). */
const otherRequests: { path: string; authorization: string | undefined }[] = [];

const cleanPath = (url: string | undefined) =>
  normalize(decodeURIComponent((url ?? '/').split('?')[0]!)).replace(/^(\.\.[/\\])+/, '');

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'psync-chart-fail-e2e-'));
  repoDir = join(work, 'repo');
  otherDir = join(work, 'other');
  await mkdir(repoDir);
  await mkdir(otherDir);
  repo = createServer((req, res) => {
    const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="charts"' }).end();
      return;
    }
    const path = cleanPath(req.url);
    if (redirected.has(path)) {
      res.writeHead(302, { Location: `${base.replace('127.0.0.1', '127.0.0.2')}${path}` }).end();
      return;
    }
    readFile(join(repoDir, path)).then(
      (body) => res.writeHead(200).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => repo.listen(0, '127.0.0.1', resolve));
  const port = (repo.address() as { port: number }).port;
  base = `http://127.0.0.1:${port}`;
  other = createServer((req, res) => {
    const path = cleanPath(req.url);
    otherRequests.push({ path, authorization: req.headers.authorization });
    readFile(join(otherDir, path)).then(
      (body) => res.writeHead(200).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => other.listen(port, '127.0.0.2', resolve));
  env = await startGitEnv();
}, 600_000);

afterAll(async () => {
  await env?.dispose();
  await Promise.all([repo, other].map((s) => s && new Promise((resolve) => s.close(resolve))));
  if (work) await rm(work, { recursive: true, force: true });
});

const toolEnv = () => ({ PATH: process.env.PATH ?? '', HOME: work, HELM_CACHE_HOME: join(work, '.helm-cache') });

/** `helm package` of a one-ConfigMap chart into `into` (default: the repository, then re-indexed): its sha256. */
async function publish(name: string, version: string, greeting = 'hello', into = repoDir): Promise<string> {
  const chart = join(work, 'src', `${name}-${version}-${greeting}`, name);
  await mkdir(join(chart, 'templates'), { recursive: true });
  await writeFile(join(chart, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: ${version}\n`);
  await writeFile(
    join(chart, 'templates', 'cm.yaml'),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  greeting: ${greeting}\n`,
  );
  await run(helm, ['package', chart, '--destination', into], { env: toolEnv() });
  if (into === repoDir) await reindex();
  return createHash('sha256')
    .update(await readFile(join(into, `${name}-${version}.tgz`)))
    .digest('hex');
}

const reindex = () => run(helm, ['repo', 'index', repoDir], { env: toolEnv() });

async function setup(prefix: string, name: string, version: string): Promise<string> {
  const ns = await env.namespace(prefix);
  const client = await kube();
  const body = { metadata: { name: 'charts' }, stringData: { username: USER, password: PASSWORD } };
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body });
  await createPackageSync(
    packageSync(ns, 'web', env.controller.shard, {
      source: { chart: { repository: base, name, version, secretRef: { name: 'charts' }, insecure: true } },
      interval: '1h',
      retryInterval: '2s',
      wait: false,
    }),
  );
  return ns;
}

describe('chart repository failures', () => {
  it('a version removed from the index: RefNotFound naming the version, the applied objects and revision stay', async () => {
    const digest = await publish('gone', '1.0.0');
    const ns = await setup('e2e-chart-gone', 'gone', '1.0.0');
    await waitReady(ns, 'web', (ps) => ps.status?.lastAppliedRevision === `1.0.0@sha256:${digest}`);

    await unlink(join(repoDir, 'gone-1.0.0.tgz'));
    await reindex();
    const client = await kube();
    await client.request('PATCH', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs/web`, {
      body: { metadata: { annotations: { [RECONCILE_REQUESTED_AT]: new Date().toISOString() } } },
      contentType: 'application/merge-patch+json',
    });
    const failed = await waitCondition(ns, 'web', 'Ready', 'False', 'RefNotFound');
    const message = failed.status!.conditions!.find((c) => c.type === 'Ready')!.message;
    expect(message).toContain('chart gone 1.0.0');
    expect(message).toContain('spec.source.chart');
    expect(failed.status?.lastAppliedRevision).toBe(`1.0.0@sha256:${digest}`);
    expect((await get(cmPath(ns, 'web-config')))?.data).toEqual({ greeting: 'hello' });
  });

  it('an archive changed behind its index (digest mismatch): ArtifactDigestMismatch, nothing applied', async () => {
    const indexed = await publish('tampered', '1.0.0');
    // another archive under the same name, the index left as it was
    const swapped = await publish('tampered', '1.0.0', 'evil', otherDir);
    await copyFile(join(otherDir, 'tampered-1.0.0.tgz'), join(repoDir, 'tampered-1.0.0.tgz'));
    const ns = await setup('e2e-chart-tampered', 'tampered', '1.0.0');
    const ps = await waitCondition(ns, 'web', 'Stalled', 'True', 'ArtifactDigestMismatch');
    const message = ps.status!.conditions!.find((c) => c.type === 'Stalled')!.message;
    expect(message).toContain(`sha256:${swapped}`);
    expect(message).toContain(`sha256:${indexed}`);
    expect(await get(cmPath(ns, 'web-config'))).toBeUndefined();
  });

  it('a download redirected to another host never carries the credentials there', async () => {
    const digest = await publish('moved', '1.0.0', 'moved');
    await copyFile(join(repoDir, 'moved-1.0.0.tgz'), join(otherDir, 'moved-1.0.0.tgz'));
    redirected.add('/moved-1.0.0.tgz');
    const ns = await setup('e2e-chart-moved', 'moved', '1.0.0');
    await waitReady(ns, 'web', (ps) => ps.status?.lastAppliedRevision === `1.0.0@sha256:${digest}`);
    expect((await get(cmPath(ns, 'web-config')))?.data).toEqual({ greeting: 'moved' });
    const asked = otherRequests.filter((r) => r.path === '/moved-1.0.0.tgz');
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((r) => r.authorization === undefined)).toBe(true);
  });
});
