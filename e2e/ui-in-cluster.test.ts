/**
 * The web UI served by the controller itself (`controller --ui-address`, issue 28), in a real headless Chromium
 * against the real control plane: no token, no access; a ServiceAccount token signed in through the form acts as
 * that ServiceAccount (its Role allows suspend: done, an Event names it); another sent as a bearer header, as an
 * auth proxy would, is refused with the API server's message; each sees only the namespaces RBAC lets it list;
 * an auth proxy's X-Remote-User is believed only from the identity --ui-auth-proxy-identity names; behind the
 * proxy, the Plan of a PackageSync with a ServiceAccount runs for a user RBAC allows `create packagesyncs/plan`
 * (as the controller impersonating the ServiceAccount: the CLI's own text) and is refused, in the API server's
 * words, for one it does not (docs/adr/0046).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPackageSync } from './support/controller.ts';
import { packagesync } from './support/cli.ts';
import { configMap, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { installCRDs } from './support/crds.ts';
import { eventually, kube, kubectl, trackNamespaces, uniqueName } from './support/cluster.ts';
import {
  condition,
  createWithStatus,
  ensureUiBuilt,
  freePort,
  launchChromium,
  serviceAccountUser,
  tokenOf,
  screenshotPath,
} from './support/ui.ts';

const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 15_000, interval: 100 });
const namespaces = trackNamespaces();
const rbac = '/apis/rbac.authorization.k8s.io/v1';

let tmp: string;
let ns: string;
let other: string;
let url: string;
let env: GitEnvWithController;
let browser: Browser;
let operatorToken: string;
let readerToken: string;
let proxyToken: string;
const viewersGroup = uniqueName('e2e-uic-viewers');
const proxyRole = uniqueName('e2e-uic-proxy');
/** Behind the proxy: alice may plan (a Role over packagesyncs/plan), bob only reads (the viewers group). */
const alice = `${uniqueName('alice')}@example.com`;
const bob = `${uniqueName('bob')}@example.com`;

const ready = [
  condition('Ready', 'True', 'ReconciliationSucceeded', 'Applied revision main@sha1:1'),
  condition('Reconciling', 'False', 'ReconciliationSucceeded'),
];

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'psync-uic-'));
  await Promise.all([installCRDs(), ensureUiBuilt()]);
  [ns, other] = await Promise.all([namespaces.create('e2e-uic'), namespaces.create('e2e-uic-other')]);
  await Promise.all([
    createWithStatus(ns, { name: 'web', conditions: ready }),
    createWithStatus(ns, { name: 'api', conditions: ready }),
    createWithStatus(other, { name: 'elsewhere', conditions: ready }),
  ]);
  const [operator, reader, proxy] = await Promise.all([
    serviceAccountUser(ns, 'operator', ['get', 'list', 'watch', 'patch'], tmp),
    serviceAccountUser(ns, 'reader', ['get', 'list', 'watch'], tmp),
    serviceAccountUser(ns, 'proxy', ['get'], tmp),
  ]);
  [operatorToken, readerToken, proxyToken] = await Promise.all([tokenOf(operator), tokenOf(reader), tokenOf(proxy)]);
  // the auth proxy may impersonate users and groups (the API server checks it); the group may read in ns
  const client = await kube();
  await client.request('POST', `${rbac}/clusterroles`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: proxyRole },
      rules: [{ apiGroups: [''], resources: ['users', 'groups'], verbs: ['impersonate'] }],
    },
  });
  await client.request('POST', `${rbac}/clusterrolebindings`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: proxyRole },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: proxyRole },
      subjects: [{ kind: 'ServiceAccount', name: 'proxy', namespace: ns }],
    },
  });
  await client.request('POST', `${rbac}/namespaces/${ns}/rolebindings`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'viewers' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: viewersGroup }],
    },
  });
  const port = await freePort();
  url = `http://127.0.0.1:${port}/`;
  env = await startGitEnv({
    args: ['--ui-address', `127.0.0.1:${port}`, '--ui-auth-proxy-identity', `system:serviceaccount:${ns}:proxy`],
  });
  await plannedPackage(client);
  await eventually(
    'the controller serves the UI',
    () =>
      fetch(url).then(
        (r) => r.ok,
        () => false,
      ),
    { timeoutMs: 60_000 },
  );
  browser = await launchChromium();
});

/**
 * PackageSync `planned` in ns: a ConfigMap from a real git repo, applied as ServiceAccount `deployer` (a Role over
 * ConfigMaps); alice's Role allows `create` on packagesyncs/plan, nothing else.
 */
async function plannedPackage(client: Awaited<ReturnType<typeof kube>>): Promise<void> {
  const repo = await env.repo('uic-planned', { 'cm.yaml': configMap('planned', { color: 'green' }) });
  await createWithStatus(ns, { name: 'planned', url: repo.url, serviceAccountName: 'deployer', conditions: ready });
  await client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'deployer' } },
  });
  const role = (name: string, rules: object[], subject: object) =>
    Promise.all([
      client.request('POST', `${rbac}/namespaces/${ns}/roles`, {
        body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules },
      }),
      client.request('POST', `${rbac}/namespaces/${ns}/rolebindings`, {
        body: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
          subjects: [subject],
        },
      }),
    ]);
  await Promise.all([
    role('deployer', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }], {
      kind: 'ServiceAccount',
      name: 'deployer',
      namespace: ns,
    }),
    role('planner', [{ apiGroups: ['packagesync.io'], resources: ['packagesyncs/plan'], verbs: ['create'] }], {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'User',
      name: alice,
    }),
  ]);
}

afterAll(async () => {
  await browser?.close();
  await env?.dispose();
  const client = await kube();
  await client.request('DELETE', `${rbac}/clusterrolebindings/${proxyRole}`).catch(() => undefined);
  await client.request('DELETE', `${rbac}/clusterroles/${proxyRole}`).catch(() => undefined);
  await namespaces.deleteAll();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const contexts: BrowserContext[] = [];
async function open(hash = '', headers?: Record<string, string>): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, extraHTTPHeaders: headers });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${url}${hash}`);
  return page;
}

const rowNames = (page: Page) =>
  page.locator('table.fleet tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name')));

describe('in-cluster UI: no token, no access', () => {
  it('refuses every API request without a token the API server accepts, and asks the page to sign in', async () => {
    for (const path of ['api/packagesyncs', 'api/whoami', 'api/watch', `api/packagesyncs/${ns}/web`]) {
      const res = await fetch(`${url}${path}`);
      expect({ path, status: res.status, body: await res.json() }).toMatchObject({
        path,
        status: 401,
        body: { ok: false, signIn: true },
      });
    }
    const forged = await fetch(`${url}api/packagesyncs`, { headers: { authorization: 'Bearer not.a.token' } });
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { message: string }).message).toMatch(/the API server refused the token/);
    const action = await fetch(`${url}api/packagesyncs/${ns}/web/suspend`, { method: 'POST' });
    expect(action.status).toBe(401);
    expect((await getPackageSync(ns, 'web'))?.spec.suspend).toBe(false);

    const page = await open();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.locator('table.fleet').count()).toBe(0);
    await page.getByLabel('Bearer token').fill('not.a.token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.getByRole('status').textContent()).toMatch(/the API server refused the token: Unauthorized/);
    const axe = await readFile(resolve(import.meta.dirname, '../node_modules/axe-core/axe.min.js'), 'utf8');
    await page.evaluate(`${axe}\n;0`);
    const violations = await page.evaluate<string[]>(
      `axe.run().then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id))`,
    );
    expect(violations).toEqual([]);
    await page.screenshot({ path: screenshotPath('ui-sign-in.png') });
  });
});

describe('in-cluster UI: each request acts as its own token', () => {
  it('a ServiceAccount signed in through the form sees its namespace only, suspends, and the Event names it', async () => {
    const page = await open();
    await page.getByLabel('Bearer token').fill(operatorToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // RBAC lets it list in ns only: the PackageSync in the other namespace (and every other test's) stays hidden
    await poll(() => rowNames(page)).toEqual(['api', 'planned', 'web']);
    expect(await page.locator('.who').textContent()).toContain(`system:serviceaccount:${ns}:operator`);
    await page.goto(`${url}#/ps/${ns}/api`);
    await page.getByRole('button', { name: 'Suspend' }).click();
    await poll(() => page.getByRole('status').textContent()).toBe(`PackageSync ${ns}/api suspended`);
    expect((await getPackageSync(ns, 'api'))?.spec.suspend).toBe(true);
    const events = await eventually('the Suspended event', async () => {
      const out = await kubectl('get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=api', '-o', 'json');
      const items = (JSON.parse(out) as { items: { reason: string; message: string }[] }).items;
      return items.some((e) => e.reason === 'Suspended') && items;
    });
    expect(events.map((e) => `${e.reason}: ${e.message}`)).toContain(
      `Suspended: suspended by system:serviceaccount:${ns}:operator in packagesync ui`,
    );
    // another namespace's page is the API server's refusal, not the controller's view
    const outside = await page.evaluate(
      (path) => fetch(path).then((r) => r.status),
      `/api/packagesyncs/${other}/elsewhere`,
    );
    expect(outside).toBe(403);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => fetch('/api/packagesyncs').then((r) => r.status))).toBe(401);
  });

  it("a token whose Role does not allow the action, sent as a bearer header, gets the API server's refusal", async () => {
    const page = await open(`#/ps/${ns}/web`, { authorization: `Bearer ${readerToken}` });
    await page.getByRole('button', { name: 'Suspend' }).click();
    const outcome = page.getByRole('status');
    await poll(() => outcome.textContent()).toContain('Forbidden: ');
    expect(await outcome.textContent()).toContain(
      `User "system:serviceaccount:${ns}:reader" cannot patch resource "packagesyncs"`,
    );
    expect((await getPackageSync(ns, 'web'))?.spec.suspend).toBe(false);
    // no Sign out: the header, not a session, carries the token
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
  });
});

describe('in-cluster UI behind an auth proxy', () => {
  const whoami = (headers: Record<string, string>) =>
    fetch(`${url}api/whoami`, { headers }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it("impersonates the proxy's X-Remote-User and groups when the bearer is the proxy named by the flag", async () => {
    const headers = {
      authorization: `Bearer ${proxyToken}`,
      'x-remote-user': 'alice@example.com',
      'x-remote-group': viewersGroup,
    };
    expect(await whoami(headers)).toMatchObject({ status: 200, body: { user: 'alice@example.com' } });
    const fleet = await fetch(`${url}api/packagesyncs?namespace=${ns}`, { headers });
    const names = ((await fleet.json()) as { items: { name: string }[] }).items.map((r) => r.name);
    expect(names).toEqual(['api', 'planned', 'web']);
    const refused = await fetch(`${url}api/packagesyncs?namespace=${other}`, { headers });
    expect(((await refused.json()) as { items: unknown[] }).items).toEqual([]);
  });

  it('believes X-Remote-User from no other token', async () => {
    const res = await whoami({ authorization: `Bearer ${readerToken}`, 'x-remote-user': 'system:admin' });
    expect(res).toMatchObject({ status: 401 });
    expect((res.body as { message: string }).message).toBe(
      `X-Remote-User is believed only from system:serviceaccount:${ns}:proxy, not from system:serviceaccount:${ns}:reader`,
    );
  });
  const asProxied = (user: string) => ({
    authorization: `Bearer ${proxyToken}`,
    'x-remote-user': user,
    'x-remote-group': viewersGroup,
  });

  it("plans as the PackageSync's ServiceAccount for a proxied user RBAC allows packagesyncs/plan, the CLI's text", async () => {
    const page = await open(`#/ps/${ns}/planned`, asProxied(alice));
    await page.getByRole('button', { name: 'Plan the newest commit' }).click();
    const shown = page.locator('pre.plan');
    await shown.waitFor({ timeout: 120_000 });
    // the server's own identity impersonating deployer: the same plan the controller's kubeconfig gets from the CLI
    const cli = await packagesync('plan', 'planned', '-n', ns, '--allow-insecure-http');
    expect(cli.code, cli.stderr).toBe(1);
    expect(cli.stdout).toContain(`system:serviceaccount:${ns}:deployer`);
    expect(await shown.textContent()).toBe(cli.stdout);
    expect(await page.locator('#h-plan ~ div[aria-live] p').first().textContent()).toBe('exit 1: changes');
  });

  it("refuses the plan, in the API server's words, to a proxied user RBAC does not allow it", async () => {
    const page = await open(`#/ps/${ns}/planned`, asProxied(bob));
    await page.getByRole('button', { name: 'Plan the newest commit' }).click();
    const refusal = page.locator('#h-plan ~ div[aria-live] p.alert');
    await poll(() => refusal.textContent()).toContain(
      `User "${bob}" cannot create resource "packagesyncs/plan" in API group "packagesync.io" in the namespace "${ns}"`,
    );
    expect(await page.locator('pre.plan').count()).toBe(0);
  });
});
