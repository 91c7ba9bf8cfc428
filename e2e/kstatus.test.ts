/**
 * kstatus agrees with us: cli-utils' own kstatus (hack/kstatus-check, a small Go program built from the Go
 * module proxy) reads a live PackageSync as Current when Ready, InProgress while it reconciles, and Failed
 * when Stalled. And the kubectl a person would use: printer columns, `kubectl wait`, `kubectl describe`.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageSync } from '../src/api/packagesync.ts';
import { kubectl } from './support/cluster.ts';
import { condition, configMap, deployment, readyAt, stalledOnHealth, watchStatus } from './support/health.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';

const root = resolve(import.meta.dirname, '..');
let env: GitEnvWithController;
let kstatusCheck: string;

beforeAll(async () => {
  const build = resolve(root, 'hack/build-cluster.sh');
  kstatusCheck = /KSTATUS_CHECK=(.*)/.exec(execFileSync(build, ['paths'], { encoding: 'utf8' }))![1]!;
  // built once per cli-utils version and main.go; cached outside the repo like the control plane
  if (!existsSync(kstatusCheck)) execFileSync(build, ['kstatus-check'], { stdio: 'inherit' });
  env = await startGitEnv();
}, 600_000);
afterAll(async () => {
  await env?.dispose();
});

async function kstatus(ps: PackageSync): Promise<string> {
  const child = promisify(execFile)(kstatusCheck, [], { encoding: 'utf8' });
  child.child.stdin!.end(JSON.stringify(ps));
  return (await child).stdout.trim();
}

describe.concurrent('kstatus readers', () => {
  it('see Current when Ready, and kubectl shows, waits for and describes it', async () => {
    const ns = await env.namespace('e2e-kstatus-ready');
    const { url, sha } = await env.repo('ready', { 'cm.yaml': configMap('c') });
    await env.sync(ns, 'app', { source: { url } });
    // what a person types: it returns once Ready, without polling scripts
    await kubectl('wait', '--for=condition=Ready', 'pks/app', '-n', ns, '--timeout=30s');
    const { last } = await watchStatus(ns, 'app', readyAt(sha));
    expect(await kstatus(last)).toMatch(/^Current /);

    const table = await kubectl('get', 'pks', 'app', '-n', ns);
    const [header, row] = table.trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['NAME', 'READY', 'STATUS', 'REVISION', 'SUSPENDED', 'AGE']);
    expect(row).toContain(`Applied revision main@sha1:${sha}: 1 created`);
    expect(row).toContain(`main@sha1:${sha}`);
    const described = await kubectl('describe', 'pks', 'app', '-n', ns);
    expect(described).toMatch(/Events:[\s\S]*Normal\s+Applied\s+.*Revision main@sha1:[0-9a-f]{40}: 1 created/);
  });

  it('see InProgress while it waits for health, and Failed once Stalled', async () => {
    const ns = await env.namespace('e2e-kstatus-wait');
    const { url } = await env.repo('wait', { 'web.yaml': deployment('web', { failure: 'NotReady' }) });
    await env.sync(ns, 'app', { source: { url }, timeout: '8s' });
    const waiting = await watchStatus(ns, 'app', (ps) => condition(ps, 'Reconciling')?.status === 'True');
    expect(await kstatus(waiting.last)).toMatch(/^InProgress /);
    const stalled = await watchStatus(ns, 'app', stalledOnHealth, 30_000);
    const seen = await kstatus(stalled.last);
    expect(seen).toMatch(/^Failed /);
    expect(seen).toContain(`timeout waiting for health: 1 object not Current: Deployment/${ns}/web`);
    const described = await kubectl('describe', 'pks', 'app', '-n', ns);
    expect(described).toMatch(/Warning\s+HealthCheckFailed\s+.*timeout waiting for health/);
  });
});
