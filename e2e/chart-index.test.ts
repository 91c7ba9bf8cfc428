/**
 * A chart repository's index.yaml (issue 33, docs/adr/0041), end to end against loopback repositories that this
 * file alone uses: the index is asked for again every interval with If-None-Match, a 304 keeps the cached copy
 * (counted on the server, per repository), and a new version published is a 200 and a new revision; an index
 * that is a YAML bomb, or endless, is refused with its reason while a PackageSync beside it stays Ready.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chartConfigMap,
  publishChart,
  serveChartRepository,
  type ChartRepository,
} from './support/chart-repository.ts';
import { eventually } from './support/cluster.ts';
import { createPackageSync, packageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, get } from './support/safety.ts';

let env: GitEnvWithController;
let work: string;
const repos: ChartRepository[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'psync-chart-index-e2e-'));
  env = await startGitEnv();
}, 600_000);

afterAll(async () => {
  await env?.dispose();
  await Promise.all(repos.map((r) => r.close()));
  if (work) await rm(work, { recursive: true, force: true });
});

async function repository(name: string): Promise<ChartRepository> {
  const repo = await serveChartRepository(work, name);
  repos.push(repo);
  return repo;
}

const chartFiles = (version: string) => ({
  'Chart.yaml': `apiVersion: v2\nname: app\nversion: ${version}\n`,
  'templates/cm.yaml': chartConfigMap('{{ .Release.Name }}-app'),
});

function chartSync(ns: string, repo: ChartRepository, interval: string) {
  return packageSync(ns, 'web', env.controller.shard, {
    source: { chart: { repository: repo.url, name: 'app', version: '1.x', insecure: true } },
    interval,
    retryInterval: '2s',
    wait: false,
  });
}

const indexRequests = (repo: ChartRepository) => repo.requests.filter((r) => r.path === '/index.yaml');

describe('chart repository index', () => {
  it('asks again every interval with If-None-Match: a 304 keeps the cached index, a new version is a 200 and applied', async () => {
    const repo = await repository('conditional');
    await publishChart(work, repo, 'app', '1.0.0', chartFiles('1.0.0'));
    const ns = await env.namespace('e2e-chart-index');
    await createPackageSync(chartSync(ns, repo, '2s'));
    await waitReady(ns, 'web', (ps) => ps.status?.lastAppliedRevision?.startsWith('1.0.0@sha256:') === true);
    // later intervals: the same index, answered 304 by this repository's own server
    await eventually('two more index requests', async () => indexRequests(repo).length >= 3);
    const statuses = indexRequests(repo).map((r) => r.status);
    expect(statuses[0]).toBe(200);
    expect(statuses.slice(1).every((s) => s === 304)).toBe(true);
    await publishChart(work, repo, 'app', '1.1.0', chartFiles('1.1.0'));
    await waitReady(ns, 'web', (ps) => ps.status?.lastAppliedRevision?.startsWith('1.1.0@sha256:') === true);
    expect((await get(cmPath(ns, 'web-app')))?.data).toEqual({ chart: 'app', version: '1.1.0' });
    expect(indexRequests(repo).some((r, i) => i > 0 && r.status === 200)).toBe(true);
  });

  it('refuses an index that is a YAML bomb or endless, with its reason; a PackageSync beside them stays Ready', async () => {
    const good = await repository('good');
    await publishChart(work, good, 'app', '1.0.0', chartFiles('1.0.0'));
    const bomb = await repository('bomb');
    bomb.override = (path, _req, res) => {
      if (path !== '/index.yaml') return false;
      const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
      for (let i = 1; i < 10; i++) {
        const prev = String.fromCharCode(96 + i);
        const name = String.fromCharCode(97 + i);
        levels.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(',')}]`);
      }
      res.writeHead(200, { 'Content-Type': 'application/x-yaml' }).end(`apiVersion: v1\n${levels.join('\n')}\n`);
      return true;
    };
    const endless = await repository('endless');
    endless.override = (path, _req, res) => {
      if (path !== '/index.yaml') return false;
      res.writeHead(200, { 'Content-Type': 'application/x-yaml' });
      const chunk = Buffer.from(`# ${'x'.repeat(65_000)}\n`);
      const more = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', more);
      };
      more();
      return true;
    };
    const [nsGood, nsBomb, nsEndless] = await Promise.all([
      env.namespace('e2e-index-good'),
      env.namespace('e2e-index-bomb'),
      env.namespace('e2e-index-endless'),
    ]);
    await Promise.all([
      createPackageSync(chartSync(nsGood, good, '1h')),
      createPackageSync(chartSync(nsBomb, bomb, '1h')),
      createPackageSync(chartSync(nsEndless, endless, '1h')),
    ]);
    const bombed = await waitCondition(nsBomb, 'web', 'Stalled', 'True', 'ArtifactUnsafeEntry');
    expect(bombed.status!.conditions!.find((c) => c.type === 'Stalled')!.message).toContain('YAML bomb');
    const long = await waitCondition(nsEndless, 'web', 'Stalled', 'True', 'ArtifactTooLarge');
    expect(long.status!.conditions!.find((c) => c.type === 'Stalled')!.message).toContain('index.yaml');
    await waitReady(nsGood, 'web');
    expect((await get(cmPath(nsGood, 'web-app')))?.data).toEqual({ chart: 'app', version: '1.0.0' });
    expect(await get(cmPath(nsBomb, 'web-app'))).toBeUndefined();
    expect(await get(cmPath(nsEndless, 'web-app'))).toBeUndefined();
  });
});
