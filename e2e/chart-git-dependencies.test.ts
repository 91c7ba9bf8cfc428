/**
 * A chart in git whose dependencies are not vendored (issue 33, docs/adr/0041), end to end: the umbrella
 * chart is committed with Chart.yaml and Chart.lock only; its dependencies live in two Helm repositories on
 * loopback, one behind basic auth whose credentials come from spec.source.dependencyRepositories, one
 * anonymous. The controller fetches them as `helm dependency build` does: the lock's versions (not the newest
 * match), aliases and conditions honoured, the private repository's credentials sent to it alone, a lock out of
 * sync with Chart.yaml refused, and a private repository without an entry failing as AuthenticationFailed.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chartConfigMap,
  helm,
  publishChart,
  serveChartRepository,
  type ChartRepository,
} from './support/chart-repository.ts';
import { kube } from './support/cluster.ts';
import { createPackageSync, packageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, get } from './support/safety.ts';

const run = promisify(execFile);
const USER = 'dep-reader';
const PASSWORD = `pw-${randomBytes(8).toString('hex')}`;

let env: GitEnvWithController;
let work: string;
let privateRepo: ChartRepository;
let publicRepo: ChartRepository;
/** The umbrella chart's files as committed: Chart.yaml, the Chart.lock `helm dependency update` wrote, templates. */
let umbrella: Record<string, string>;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'psync-chart-git-deps-e2e-'));
  privateRepo = await serveChartRepository(work, 'private', { user: USER, password: PASSWORD });
  publicRepo = await serveChartRepository(work, 'public');
  await publishChart(work, privateRepo, 'dep', '0.3.0', {
    'Chart.yaml': 'apiVersion: v2\nname: dep\nversion: 0.3.0\n',
    'templates/cm.yaml': chartConfigMap('{{ .Release.Name }}-{{ .Chart.Name }}'),
  });
  await publishChart(work, publicRepo, 'extra', '1.0.0', {
    'Chart.yaml': 'apiVersion: v2\nname: extra\nversion: 1.0.0\n',
    'templates/cm.yaml': chartConfigMap('{{ .Release.Name }}-extra'),
  });
  umbrella = {
    'Chart.yaml': [
      'apiVersion: v2',
      'name: umbrella',
      'version: 1.0.0',
      'dependencies:',
      `  - {name: dep, version: "0.x", repository: "${privateRepo.url}", alias: sub, condition: sub.enabled}`,
      `  - {name: dep, version: "0.x", repository: "${privateRepo.url}", alias: off, condition: off.enabled}`,
      `  - {name: extra, version: "1.x", repository: "${publicRepo.url}"}`,
      '',
    ].join('\n'),
    'values.yaml': 'sub: {enabled: true}\noff: {enabled: false}\n',
    'templates/cm.yaml': chartConfigMap('{{ .Release.Name }}-umbrella'),
  };
  // the lock as a developer's `helm dependency update` writes it (with the private repository's credentials)
  const chart = join(work, 'lock', 'umbrella');
  for (const [path, content] of Object.entries(umbrella)) {
    await mkdir(join(chart, path, '..'), { recursive: true });
    await writeFile(join(chart, path), content);
  }
  const config = join(work, 'lock-config');
  await mkdir(config, { recursive: true });
  await writeFile(
    join(config, 'repositories.yaml'),
    JSON.stringify({
      repositories: [{ name: 'private', url: privateRepo.url, username: USER, password: PASSWORD }],
    }),
  );
  await run(helm, ['dependency', 'update', chart], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: work,
      HELM_CONFIG_HOME: config,
      HELM_REPOSITORY_CONFIG: join(config, 'repositories.yaml'),
      HELM_CACHE_HOME: join(work, 'lock-cache'),
    },
  });
  umbrella['Chart.lock'] = await readFile(join(chart, 'Chart.lock'), 'utf8');
  // published after the lock: the newest match of 0.x, which the lock keeps out
  await publishChart(work, privateRepo, 'dep', '0.4.0', {
    'Chart.yaml': 'apiVersion: v2\nname: dep\nversion: 0.4.0\n',
    'templates/cm.yaml': chartConfigMap('{{ .Release.Name }}-{{ .Chart.Name }}'),
  });
  env = await startGitEnv();
}, 600_000);

afterAll(async () => {
  await env?.dispose();
  await Promise.all([privateRepo, publicRepo].map((r) => r?.close()));
  if (work) await rm(work, { recursive: true, force: true });
});

async function secret(ns: string): Promise<void> {
  const client = await kube();
  const body = { metadata: { name: 'dep-auth' }, stringData: { username: USER, password: PASSWORD } };
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body });
}

const inGit = (files: Record<string, string>) =>
  Object.fromEntries(Object.entries(files).map(([path, content]) => [`charts/umbrella/${path}`, content]));

function gitChartSync(ns: string, url: string, withCredentials = true) {
  return packageSync(ns, 'web', env.controller.shard, {
    source: {
      url,
      path: 'charts/umbrella',
      ...(withCredentials
        ? { dependencyRepositories: [{ url: `${privateRepo.url}/`, secretRef: { name: 'dep-auth' } }] }
        : {}),
    },
    interval: '1h',
    retryInterval: '2s',
    wait: false,
  });
}

describe('dependencies of a chart in git', () => {
  it('fetches them as helm dependency build does: the lock’s versions, aliases, conditions, each repository its own credentials', async () => {
    const { url } = await env.repo('git-chart-deps', inGit(umbrella));
    const ns = await env.namespace('e2e-git-chart-deps');
    await secret(ns);
    const seenPrivate = privateRepo.requests.length;
    const seenPublic = publicRepo.requests.length;
    await createPackageSync(gitChartSync(ns, url));
    await waitReady(ns, 'web');
    expect((await get(cmPath(ns, 'web-umbrella')))?.data).toEqual({ chart: 'umbrella', version: '1.0.0' });
    // Chart.lock pinned 0.3.0 although 0.4.0 matches 0.x too; the alias is the subchart's name
    expect((await get(cmPath(ns, 'web-sub')))?.data).toEqual({ chart: 'sub', version: '0.3.0' });
    expect(await get(cmPath(ns, 'web-off'))).toBeUndefined();
    expect((await get(cmPath(ns, 'web-extra')))?.data).toEqual({ chart: 'extra', version: '1.0.0' });
    const toPrivate = privateRepo.requests.slice(seenPrivate);
    const toPublic = publicRepo.requests.slice(seenPublic);
    expect(toPrivate.some((r) => r.path.endsWith('dep-0.3.0.tgz') && r.status === 200)).toBe(true);
    expect(toPrivate.some((r) => r.path.endsWith('dep-0.4.0.tgz'))).toBe(false);
    // the private repository's Secret went to it, and never to the other repository
    expect(toPrivate.every((r) => r.status !== 401)).toBe(true);
    expect(toPublic.some((r) => r.path.endsWith('extra-1.0.0.tgz'))).toBe(true);
    expect(toPublic.every((r) => r.authorization === undefined)).toBe(true);
  });

  it('fails as AuthenticationFailed, nothing applied, when no dependencyRepositories entry covers the private repository', async () => {
    const { url } = await env.repo('git-chart-deps-noauth', inGit(umbrella));
    const ns = await env.namespace('e2e-git-chart-noauth');
    await createPackageSync(gitChartSync(ns, url, false));
    const failed = await waitCondition(ns, 'web', 'Ready', 'False', 'AuthenticationFailed');
    const message = failed.status!.conditions!.find((c) => c.type === 'Ready')!.message;
    expect(message).toContain('umbrella');
    expect(message).not.toContain(PASSWORD);
    expect(await get(cmPath(ns, 'web-umbrella'))).toBeUndefined();
  });

  it('refuses a Chart.lock out of sync with Chart.yaml: ArtifactDigestMismatch naming Chart.lock, nothing applied', async () => {
    const stale = umbrella['Chart.lock']!.replace(/^digest: sha256:[0-9a-f]+$/m, `digest: sha256:${'0'.repeat(64)}`);
    expect(stale).not.toBe(umbrella['Chart.lock']);
    const { url } = await env.repo('git-chart-deps-stale', inGit({ ...umbrella, 'Chart.lock': stale }));
    const ns = await env.namespace('e2e-git-chart-lock');
    await secret(ns);
    await createPackageSync(gitChartSync(ns, url));
    const ps = await waitCondition(ns, 'web', 'Stalled', 'True', 'ArtifactDigestMismatch');
    const message = ps.status!.conditions!.find((c) => c.type === 'Stalled')!.message;
    expect(message).toContain('chart umbrella');
    expect(message).toContain('Chart.lock');
    expect(await get(cmPath(ns, 'web-umbrella'))).toBeUndefined();
  });
});
