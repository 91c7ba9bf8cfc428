/**
 * The web UI's fleet at size and a real package's page, in a real headless Chromium against the real control plane
 * and controller (issue 28): 200 PackageSyncs in several states listed, counted, paged and filtered by state,
 * label and text; a package's graph (apply order, depends-on, the Deployment's ReplicaSets and Pods) with the
 * right health after a rollout; a `kubectl edit` shown as drift with its field path and the manager; `plan` on
 * request with the CLI's own text; an object's live YAML (a Secret's values masked) and its diff with the package;
 * axe-core clean and every action reached by keyboard. docs/ui-packagesync.png and docs/ui-object.png are written by
 * `make screenshots`.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import PQueue from 'p-queue';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { UiServer } from '../src/cli/ui/server.ts';
import { packagesync } from './support/cli.ts';
import { kubeconfig, trackNamespaces } from './support/cluster.ts';
import { patchPackageSync, waitReady } from './support/controller.ts';
import { RECONCILE_REQUESTED_AT } from '../src/api/packagesync.ts';
import { configMap, deployment, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { condition, createWithStatus, ensureUiBuilt, launchChromium, uiServer, screenshotPath } from './support/ui.ts';

const poll = <T>(fn: () => Promise<T> | T, timeout = 15_000) => expect.poll(fn, { timeout, interval: 100 });
const namespaces = trackNamespaces();

let env: GitEnvWithController;
let browser: Browser;
const servers: UiServer[] = [];
let fleetNs: string;
let fleetUi: UiServer;
let pkgNs: string;
let pkgUi: UiServer;
let repo: Awaited<ReturnType<GitEnvWithController['repo']>>;

const STATES = ['Ready', 'Failed', 'Stalled', 'Reconciling', 'Suspended'] as const;
const conditionsFor = (state: (typeof STATES)[number]) => {
  switch (state) {
    case 'Ready':
    case 'Suspended':
      return [condition('Ready', 'True', 'ReconciliationSucceeded', 'Applied revision main@sha1:1')];
    case 'Failed':
      return [condition('Ready', 'False', 'GitOperationFailed', 'git.example.com: no route to host')];
    case 'Stalled':
      return [
        condition('Ready', 'False', 'BuildFailed', 'kustomization.yaml: missing.yaml'),
        condition('Stalled', 'True', 'BuildFailed', 'kustomization.yaml: missing.yaml'),
      ];
    case 'Reconciling':
      return [condition('Reconciling', 'True', 'Progressing', 'applying')];
  }
};

/** The package's Deployment: applied once its ConfigMap is Current (depends-on). */
const webDeployment = (replicas: number, image: string) =>
  deployment('web', replicas)
    .replace('registry.local/web:1', image)
    .replace(
      'metadata: {name: web}',
      `metadata:\n  name: web\n  annotations: {config.kubernetes.io/depends-on: "/namespaces/${pkgNs}/ConfigMap/settings"}`,
    );

beforeAll(async () => {
  await ensureUiBuilt();
  env = await startGitEnv({ args: ['--drift-check-min-interval', '1s'] });
  [fleetNs, pkgNs] = await Promise.all([namespaces.create('e2e-ui-fleet'), env.namespace('e2e-ui-pkg')]);
  // 200 PackageSyncs: 40 in each state, teams a..d, env prod for every third
  const queue = new PQueue({ concurrency: 16 });
  await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      queue.add(() =>
        createWithStatus(fleetNs, {
          name: `app-${String(i).padStart(3, '0')}`,
          suspend: STATES[i % 5] === 'Suspended',
          conditions: conditionsFor(STATES[i % 5]!),
          labels: { team: `t${i % 4}`, ...(i % 3 === 0 ? { env: 'prod' } : {}) },
        }),
      ),
    ),
  );
  repo = await env.repo('ui-web', {
    'cm.yaml': configMap('settings', { color: 'blue' }),
    'deploy.yaml': webDeployment(2, 'registry.local/web:1'),
    'secret.yaml': 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: hunter2\n',
  });
  await env.syncReady(pkgNs, 'web', {
    source: { url: repo.url },
    interval: '1h',
    retryInterval: '1s',
    timeout: '2m',
    driftPolicy: 'Detect',
  });
  [fleetUi, pkgUi] = await Promise.all([uiServer(kubeconfig(), fleetNs), uiServer(kubeconfig(), pkgNs)]);
  servers.push(fleetUi, pkgUi);
  browser = await launchChromium();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(servers.map((s) => s.close()));
  await env?.dispose();
  await namespaces.deleteAll();
});

async function open(server: UiServer, hash = ''): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${server.url}${hash}`);
  return page;
}

const rowNames = (page: Page) =>
  page.locator('table.fleet tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name')));
/** Each graph node's accessible name: its SVG <title>. */
const nodeLabels = (page: Page) => page.locator('svg.graph a.node > title').allTextContents();

async function axeViolations(page: Page): Promise<string[]> {
  const axe = await readFile(resolve(import.meta.dirname, '../node_modules/axe-core/axe.min.js'), 'utf8');
  await page.evaluate(`${axe}\n;0`);
  return page.evaluate<string[]>(
    `axe.run().then((r) => r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => v.id + ': ' + v.help + ' ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`,
  );
}

describe('the fleet page at 200 PackageSyncs', () => {
  it('counts, pages and filters by state, label and text on the server', async () => {
    const page = await open(fleetUi);
    const counts = page.getByRole('list', { name: 'PackageSyncs by state' });
    await poll(() => counts.textContent()).toBe('40 Ready40 Reconciling40 Stalled40 Failed40 Suspended');
    expect(await page.locator('table.fleet caption').textContent()).toBe('200 PackageSyncs');
    expect(await rowNames(page)).toHaveLength(50);
    expect(await page.getByRole('navigation', { name: 'Pages' }).textContent()).toContain('Page 1 of 4');
    await page.getByRole('button', { name: 'Next' }).click();
    await poll(async () => (await rowNames(page))[0]).toBe('app-050');

    await page.getByLabel('Labels').fill('team=t1,env=prod');
    // t1: i % 4 == 1; prod: i % 3 == 0 → i = 9, 21, 33, …, 189: 16 of them
    await poll(() => page.locator('table.fleet caption').textContent()).toBe('16 PackageSyncs');
    expect((await rowNames(page))[0]).toBe('app-009');
    await page.getByRole('button', { name: /Failed/ }).click();
    // and Failed (i % 5 == 1): 21, 81, 141
    await poll(() => rowNames(page)).toEqual(['app-021', 'app-081', 'app-141']);
    await page.getByLabel('Search').fill('app-08');
    await poll(() => rowNames(page)).toEqual(['app-081']);
    expect(await axeViolations(page)).toEqual([]);
    await page.close();
  });
});

describe("a package's page", () => {
  it('draws the objects in apply order with their ReplicaSets and Pods, healthy after a rollout', async () => {
    const sha = await env.commit(repo.repo, { 'deploy.yaml': webDeployment(2, 'registry.local/web:2') });
    // interval 1h: the new commit is taken up on request, as `packagesync reconcile` asks
    await patchPackageSync(pkgNs, 'web', {
      metadata: { annotations: { [RECONCILE_REQUESTED_AT]: new Date().toISOString() } },
    });
    await waitReady(pkgNs, 'web', (ps) => (ps.status?.lastAppliedRevision ?? '').endsWith(sha), 120_000);
    const page = await open(pkgUi, `#/ps/${pkgNs}/web`);
    // two ReplicaSets now (the old one scaled to 0), the new one's two Pods; everything Current
    await poll(async () => {
      const labels = await nodeLabels(page);
      return {
        rs: labels.filter((l) => l.startsWith('ReplicaSet ')).length,
        pods: labels.filter((l) => l.startsWith('Pod ')).length,
        notCurrent: labels.filter((l) => !/: Current(,|$)/.test(l) && !l.startsWith('Secret ')),
      };
    }, 60_000).toEqual({ rs: 2, pods: 2, notCurrent: [] });
    const labels = await nodeLabels(page);
    expect(labels).toContain(`ConfigMap ${pkgNs}/settings: Current, applied 1st`);
    expect(labels).toContain(`Secret ${pkgNs}/creds: Unknown, applied 2nd`);
    expect(labels).toContain(`Deployment ${pkgNs}/web: Current, applied 3rd`);
    // the depends-on edge runs from the ConfigMap to the Deployment; owner edges to the ReplicaSets and Pods
    expect(await page.locator('svg.graph path.edge-dependsOn').count()).toBe(1);
    expect(await page.locator('svg.graph path.edge-owner').count()).toBe(4);
    await page.close();
  });

  it('shows a kubectl edit as drift with its field path and the manager that made it, within seconds', async () => {
    const page = await open(pkgUi, `#/ps/${pkgNs}/web`);
    await page.locator('svg.graph').waitFor();
    await promisify(execFile)(
      inject('kubectl'),
      ['--kubeconfig', kubeconfig(), '-n', pkgNs, 'edit', 'configmap', 'settings'],
      { env: { ...process.env, KUBE_EDITOR: `sed -i 's/^  color: blue$/  color: red/'` } },
    );
    const drift = page.locator('#h-drift + p + ul.drift');
    await poll(() => drift.textContent(), 20_000).toBe(
      `ConfigMap/${pkgNs}/settings/data/color changed by kubectl-edit`,
    );
    await page.close();
  });

  it("runs plan on request and shows the CLI's own text", async () => {
    // a change in git that is not applied yet: suspended, so nothing takes it up
    await patchPackageSync(pkgNs, 'web', { spec: { suspend: true } });
    await env.commit(repo.repo, { 'deploy.yaml': webDeployment(3, 'registry.local/web:2') });
    const page = await open(pkgUi, `#/ps/${pkgNs}/web`);
    await page.getByRole('button', { name: 'Plan the newest commit' }).click();
    const shown = page.locator('pre.plan');
    await shown.waitFor({ timeout: 120_000 });
    const cli = await packagesync('plan', 'web', '-n', pkgNs, '--allow-insecure-http');
    expect(cli.code, cli.stderr).toBe(1); // the Deployment's replicas change
    expect(cli.stdout).toContain('replicas');
    expect(await shown.textContent()).toBe(cli.stdout);
    expect(await page.locator('#h-plan ~ div[aria-live] p').first().textContent()).toBe('exit 1: changes');
    await page.screenshot({ path: screenshotPath('ui-packagesync.png'), fullPage: true });
    expect(await axeViolations(page)).toEqual([]);
    await page.close();
  });

  it("an object's page: live YAML, its drift, Secret values masked, and what the next apply would change", async () => {
    const page = await open(pkgUi, `#/ps/${pkgNs}/web`);
    await page.getByRole('link', { name: `ConfigMap ${pkgNs}/settings: Current, applied 1st` }).click();
    await poll(() => page.locator('pre.yaml').textContent()).toContain('color: red');
    expect(await page.locator('table.drift-fields tbody').textContent()).toBe('/data/color"red"kubectl-edit');
    expect(await page.locator('#h-managers + table').textContent()).toContain('kubectl-edit');
    await page.getByRole('button', { name: 'Compare with the package' }).click();
    await poll(() => page.locator('#h-diff ~ div[aria-live]').textContent(), 120_000).toBe(
      'The next apply would change nothing in this object: spec.driftPolicy Detect leaves the drift above as it is.',
    );
    expect(await axeViolations(page)).toEqual([]);

    await page.goto(`${pkgUi.url}#/obj/${pkgNs}/web/apps/Deployment/${pkgNs}/web`);
    await poll(() => page.locator('pre.yaml').textContent()).toContain('replicas: 2');
    await page.getByRole('button', { name: 'Compare with the package' }).click();
    await poll(() => page.locator('table.diff tbody').textContent(), 120_000).toBe('.spec.replicas23');
    await page.screenshot({ path: screenshotPath('ui-object.png'), fullPage: true });

    await page.goto(`${pkgUi.url}#/obj/${pkgNs}/web//Secret/${pkgNs}/creds`);
    await poll(() => page.locator('pre.yaml').textContent()).toContain("password: '***'");
    expect(await page.locator('main').textContent()).not.toContain('aHVudGVyMg');
    expect(await page.locator('main').textContent()).not.toContain('hunter2');
    await page.close();
  });

  it('reaches every node of the graph and the Plan button with the keyboard', async () => {
    const page = await open(pkgUi, `#/ps/${pkgNs}/web`);
    await page.locator('svg.graph a.node').first().waitFor();
    const nodes = await page.locator('svg.graph a.node').count();
    const reached = new Set<string>();
    for (let i = 0; i < nodes + 12; i++) {
      await page.keyboard.press('Tab');
      reached.add(
        await page.evaluate<string>(
          "document.activeElement?.querySelector(':scope > title')?.textContent || document.activeElement?.textContent?.trim() || ''",
        ),
      );
    }
    for (const label of await nodeLabels(page)) expect(reached).toContain(label);
    expect(reached).toContain('Plan the newest commit');
    // Enter on a node opens the object's page
    await page.getByRole('link', { name: new RegExp(`^Deployment ${pkgNs}/web`) }).focus();
    await page.keyboard.press('Enter');
    await poll(() => page.locator('h1').textContent()).toContain(`Deployment ${pkgNs}/web`);
    await page.close();
  });
});
