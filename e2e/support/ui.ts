/**
 * What the web UI's browser tests need: PackageSyncs in a chosen state (created as objects, their status written
 * through the status subresource, as a controller would), ServiceAccounts with a Role and a kubeconfig holding
 * only their token, a UI server on loopback, and Debian's chromium driven by playwright-core.
 */
import { mkdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { parse, stringify } from 'yaml';
import { packageSyncCollectionPath } from '../../src/adapters/kube/packagesyncs.ts';
import type { Condition, PackageSync } from '../../src/api/packagesync.ts';
import { connect, type Cluster } from '../../src/cli/cluster.ts';
import { UI_ASSETS_DIR } from '../../src/cli/ui/command.ts';
import { startUiServer, type UiServer } from '../../src/cli/ui/server.ts';
import { buildUi } from '../../hack/build-ui.ts';
import { kube } from './cluster.ts';
import { suiteCluster } from './deploy-rbac.ts';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Where a test's screenshot goes: .e2e/screenshots/ (ignored), or docs/ with PACKAGESYNC_DOCS_SCREENSHOTS=1
 * (`make screenshots`), so a test run never rewrites the tracked images.
 */
export function screenshotPath(name: string): string {
  const root = resolve(import.meta.dirname, '../..');
  const dir = process.env.PACKAGESYNC_DOCS_SCREENSHOTS === '1' ? join(root, 'docs') : join(root, '.e2e/screenshots');
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}

export function launchChromium(): Promise<Browser> {
  // the tests run as root in a container: chromium's sandbox needs user namespaces it may not have
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
}

let built: Promise<void> | undefined;
/** The bundle `npm run build:ui` makes, built once per run (esbuild: well under a second). */
export function ensureUiBuilt(): Promise<void> {
  built ??= buildUi(UI_ASSETS_DIR);
  return built;
}

export const condition = (type: string, status: Condition['status'], reason: string, message = ''): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: new Date().toISOString(),
  observedGeneration: 1,
});

export interface Fixture {
  name: string;
  suspend?: boolean;
  url?: string;
  labels?: Record<string, string>;
  /** spec.serviceAccountName: the identity its reconcile (and plan) acts as. */
  serviceAccountName?: string;
  conditions: Condition[];
  status?: Partial<NonNullable<PackageSync['status']>>;
}

/** Creates the PackageSync and writes its status (observedGeneration 1: the current generation). */
export async function createWithStatus(namespace: string, f: Fixture): Promise<void> {
  const client = await kube();
  await client.request('POST', packageSyncCollectionPath(namespace), {
    body: {
      apiVersion: 'packagesync.io/v1alpha1',
      kind: 'PackageSync',
      metadata: { name: f.name, namespace, ...(f.labels ? { labels: f.labels } : {}) },
      spec: {
        source: { url: f.url ?? `https://git.example.com/${f.name}.git` },
        suspend: f.suspend ?? false,
        ...(f.serviceAccountName ? { serviceAccountName: f.serviceAccountName } : {}),
      },
    },
  });
  await writeStatus(namespace, f.name, { observedGeneration: 1, conditions: f.conditions, ...f.status });
}

export async function writeStatus(namespace: string, name: string, status: object): Promise<void> {
  const client = await kube();
  await client.request('PATCH', `${packageSyncCollectionPath(namespace)}/${name}/status`, {
    contentType: 'application/merge-patch+json',
    body: { status },
  });
}

/** A Role's rule, for what a test user may do beyond PackageSyncs (PackageSyncSets, say). */
export interface RoleRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/**
 * A ServiceAccount `name` in `namespace` with a Role over PackageSyncs allowing `verbs` (and creating events,
 * and `more`), and a kubeconfig at `dir`/<name>.kubeconfig holding only its token: a user as the API server sees one.
 */
export async function serviceAccountUser(
  namespace: string,
  name: string,
  verbs: string[],
  dir: string,
  more: RoleRule[] = [],
) {
  const client = await kube();
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await client.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, {
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
  });
  await client.request('POST', `${rbac}/namespaces/${namespace}/roles`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name },
      rules: [
        { apiGroups: ['packagesync.io'], resources: ['packagesyncs'], verbs },
        { apiGroups: [''], resources: ['events'], verbs: ['list', 'create', 'patch'] },
        ...more,
      ],
    },
  });
  await client.request('POST', `${rbac}/namespaces/${namespace}/rolebindings`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  });
  const review = await client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } } },
  );
  const cluster = await suiteCluster();
  const path = join(dir, `${name}.kubeconfig`);
  await writeFile(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [cluster],
      users: [{ name, user: { token: review.status.token } }],
      contexts: [{ name, context: { cluster: cluster.name, user: name, namespace } }],
      'current-context': name,
    }),
    { mode: 0o600 },
  );
  return path;
}

/** A UI server on 127.0.0.1 acting as `kubeconfig`; closes its connection pool with it. */
export async function uiServer(kubeconfig: string, namespace?: string): Promise<UiServer> {
  await ensureUiBuilt();
  const cluster: Cluster = await connect(kubeconfig);
  const server = await startUiServer({
    cluster,
    address: '127.0.0.1',
    port: 0,
    namespace,
    assetsDir: UI_ASSETS_DIR,
    kubeconfigPath: kubeconfig,
    // the test git servers speak plain http on loopback
    planArgs: ['--allow-insecure-http'],
  });
  return {
    url: server.url,
    close: async () => {
      await server.close();
      await cluster.close();
    },
  };
}

/** The bearer token a kubeconfig written by serviceAccountUser holds: what a browser or a proxy would send. */
export async function tokenOf(kubeconfigPath: string): Promise<string> {
  const doc = parse(await readFile(kubeconfigPath, 'utf8')) as { users: { user: { token: string } }[] };
  return doc.users[0]!.user.token;
}

/** A port free on 127.0.0.1 right now (the controller's --ui-address). */
export { freePort } from '../../test/support/local-tools.ts';
