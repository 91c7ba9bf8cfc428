/**
 * A fetched chart's dependencies (issue 33, docs/adr/0041), end to end: an umbrella chart in one Helm
 * repository (basic auth) whose Chart.yaml depends on a chart of a second repository (anonymous), both served
 * on loopback by plain static servers from what the pinned `helm package` / `helm repo index` wrote. The
 * controller fetches the dependency as `helm dependency build` does (the pinned helm, sandboxed), honours
 * aliases and conditions, never sends the first repository's credentials to the second, and refuses a
 * Chart.lock out of sync with Chart.yaml.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultToolPaths } from '../src/config/tool-paths.ts';
import { kube } from './support/cluster.ts';
import { createPackageSync, packageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, get } from './support/safety.ts';
import { tarball } from './support/tarball.ts';

const run = promisify(execFile);
const helm = defaultToolPaths().helm;
const USER = 'umbrella-reader';
const PASSWORD = `pw-${randomBytes(8).toString('hex')}`;

interface Repository {
  dir: string;
  url: string;
  server: Server;
  /** Every request's path and Authorization header (undefined when none was sent). */
  requests: { path: string; authorization: string | undefined }[];
}

let env: GitEnvWithController;
let work: string;
let main: Repository;
let second: Repository;

/** A static Helm repository on loopback; with `basic`, every request must carry those credentials. */
async function serveRepository(name: string, basic?: { user: string; password: string }): Promise<Repository> {
  const dir = join(work, name);
  await mkdir(dir);
  const requests: Repository['requests'] = [];
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent((req.url ?? '/').split('?')[0]!)).replace(/^(\.\.[/\\])+/, '');
    requests.push({ path, authorization: req.headers.authorization });
    const expected = basic && `Basic ${Buffer.from(`${basic.user}:${basic.password}`).toString('base64')}`;
    if (expected !== undefined && req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="charts"' }).end();
      return;
    }
    readFile(join(dir, path)).then(
      (body) => res.writeHead(200).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { dir, server, requests, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'psync-chart-deps-e2e-'));
  main = await serveRepository('main', { user: USER, password: PASSWORD });
  second = await serveRepository('second');
  env = await startGitEnv();
}, 600_000);

afterAll(async () => {
  await env?.dispose();
  await Promise.all([main, second].map((r) => r && new Promise((resolve) => r.server.close(resolve))));
  if (work) await rm(work, { recursive: true, force: true });
});

/**
 * A chart into the repository, re-indexed by `helm repo index`: the archive's sha256. `helm package` of a
 * chart without its dependencies in charts/ is refused, so such a chart (published by other tools, or
 * packaged before `helm dependency build`) is archived here as they would.
 */
async function publish(repo: Repository, name: string, version: string, files: Record<string, string>) {
  const toolEnv = { PATH: process.env.PATH ?? '', HOME: work, HELM_CACHE_HOME: join(work, '.helm-cache') };
  if (/^dependencies:/m.test(files['Chart.yaml'] ?? '')) {
    const entries = Object.entries(files).map(([path, content]) => ({ name: `${name}/${path}`, content }));
    await writeFile(join(repo.dir, `${name}-${version}.tgz`), tarball(entries));
  } else {
    const chart = join(work, 'src', `${name}-${version}`, name);
    for (const [path, content] of Object.entries(files)) {
      await mkdir(join(chart, path, '..'), { recursive: true });
      await writeFile(join(chart, path), content);
    }
    await run(helm, ['package', chart, '--destination', repo.dir], { env: toolEnv });
  }
  await run(helm, ['repo', 'index', repo.dir], { env: toolEnv });
  return createHash('sha256')
    .update(await readFile(join(repo.dir, `${name}-${version}.tgz`)))
    .digest('hex');
}

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  chart: {{ .Chart.Name | quote }}\n  version: {{ .Chart.Version | quote }}\n`;

async function secret(ns: string): Promise<void> {
  const client = await kube();
  const body = { metadata: { name: 'charts' }, stringData: { username: USER, password: PASSWORD } };
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body });
}

function umbrellaSync(ns: string, name: string) {
  return packageSync(ns, 'web', env.controller.shard, {
    source: { chart: { repository: main.url, name, version: '1.0.0', secretRef: { name: 'charts' }, insecure: true } },
    interval: '1h',
    retryInterval: '2s',
    wait: false,
  });
}

describe('chart dependencies', () => {
  it('fetches a dependency from a second repository as helm dependency build does, aliases and conditions honoured', async () => {
    await publish(second, 'dep', '0.3.0', {
      'Chart.yaml': 'apiVersion: v2\nname: dep\nversion: 0.3.0\n',
      'templates/cm.yaml': configMap('{{ .Release.Name }}-{{ .Chart.Name }}'),
    });
    const umbrella = await publish(main, 'umbrella', '1.0.0', {
      'Chart.yaml': [
        'apiVersion: v2',
        'name: umbrella',
        'version: 1.0.0',
        'dependencies:',
        `  - {name: dep, version: "0.x", repository: "${second.url}", alias: sub, condition: sub.enabled}`,
        `  - {name: dep, version: "0.x", repository: "${second.url}", alias: off, condition: off.enabled}`,
        '',
      ].join('\n'),
      'values.yaml': 'sub: {enabled: true}\noff: {enabled: false}\n',
      'templates/cm.yaml': configMap('{{ .Release.Name }}-umbrella'),
    });
    const ns = await env.namespace('e2e-chart-deps');
    await secret(ns);
    await createPackageSync(umbrellaSync(ns, 'umbrella'));
    await waitReady(ns, 'web', (ps) => ps.status?.lastAppliedRevision === `1.0.0@sha256:${umbrella}`);
    expect((await get(cmPath(ns, 'web-umbrella')))?.data).toEqual({ chart: 'umbrella', version: '1.0.0' });
    // the alias is the subchart's name; the condition of the other alias switched it off
    expect((await get(cmPath(ns, 'web-sub')))?.data).toEqual({ chart: 'sub', version: '0.3.0' });
    expect(await get(cmPath(ns, 'web-off'))).toBeUndefined();
    // the second repository served the dependency and never saw the first one's credentials
    expect(second.requests.some((r) => r.path.endsWith('dep-0.3.0.tgz'))).toBe(true);
    expect(second.requests.every((r) => r.authorization === undefined)).toBe(true);
  });

  it('refuses a Chart.lock out of sync with Chart.yaml: ArtifactDigestMismatch naming Chart.lock, nothing applied', async () => {
    const lock = [
      'dependencies:',
      `- {name: dep, repository: "${second.url}", version: 0.3.0}`,
      `digest: sha256:${'0'.repeat(64)}`,
      'generated: "2026-01-01T00:00:00Z"',
      '',
    ].join('\n');
    await publish(main, 'locked', '1.0.0', {
      'Chart.yaml': `apiVersion: v2\nname: locked\nversion: 1.0.0\ndependencies:\n  - {name: dep, version: "0.x", repository: "${second.url}"}\n`,
      'Chart.lock': lock,
      'templates/cm.yaml': configMap('{{ .Release.Name }}-locked'),
    });
    const ns = await env.namespace('e2e-chart-lock');
    await secret(ns);
    await createPackageSync(umbrellaSync(ns, 'locked'));
    const ps = await waitCondition(ns, 'web', 'Stalled', 'True', 'ArtifactDigestMismatch');
    const message = ps.status!.conditions!.find((c) => c.type === 'Stalled')!.message;
    expect(message).toContain('chart locked');
    expect(message).toContain('Chart.lock');
    expect(await get(cmPath(ns, 'web-locked'))).toBeUndefined();
  });
});
