/**
 * The fleet bench/ui-fleet.ts measures the web UI with: PackageSyncs in the five states the fleet page counts, a
 * viewer whose token the UI is sent (a ServiceAccount with a Role to read PackageSyncs in the fleet's namespace,
 * as a team's user would be), the targets, and Debian's chromium.
 */
import { createServer } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import type { KubeClient } from '../../src/adapters/kube/client.ts';
import type { KubeObject } from '../../src/core/object.ts';

/** Issue 28's Measure. */
export const TARGETS = { serverMs: 100, paintMs: 1000, rssDeltaMiB: 50, sseMs: 1000 } as const;

/** Not the bench controller's BENCH_LABEL: the controller reconciles none of the fleet, only the UI lists it. */
export const UI_FLEET_LABEL = 'bench.packagesync.io/ui-fleet';

export const fleetName = (i: number) => `app-${String(i).padStart(5, '0')}`;

export function fleetFixture(ns: string, i: number): KubeObject {
  return {
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: {
      name: fleetName(i),
      namespace: ns,
      labels: { [UI_FLEET_LABEL]: 'true', team: `t${i % 8}`, ...(i % 3 === 0 ? { env: 'prod' } : {}) },
    },
    spec: {
      source: { url: `https://git.example.com/team-${i % 8}/app-${i}.git`, ref: { branch: 'main' } },
      suspend: i % 5 === 4,
    },
  };
}

const condition = (type: string, status: string, reason: string, message: string) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: new Date().toISOString(),
  observedGeneration: 1,
});

/** Ready, Failed, Stalled, Reconciling, and (spec.suspend) Suspended, by i % 5; `message` replaces Ready's. */
export function statusFor(i: number, message?: string): object {
  const revision = `main@sha1:${(i * 2654435761).toString(16).padStart(40, '0').slice(-40)}`;
  const conditions = [
    [condition('Ready', 'True', 'ReconciliationSucceeded', message ?? `Applied revision ${revision}`)],
    [condition('Ready', 'False', 'GitOperationFailed', message ?? 'git.example.com: no route to host')],
    [
      condition('Ready', 'False', 'BuildFailed', message ?? 'kustomization.yaml: missing.yaml'),
      condition('Stalled', 'True', 'BuildFailed', 'kustomization.yaml: missing.yaml'),
    ],
    [condition('Reconciling', 'True', 'Progressing', message ?? 'applying')],
    [condition('Ready', 'True', 'ReconciliationSucceeded', message ?? `Applied revision ${revision}`)],
  ][i % 5]!;
  return { observedGeneration: 1, lastAppliedRevision: revision, conditions };
}

/** A ServiceAccount that may read PackageSyncs in `ns`, and a token for it (what a browser or proxy would send). */
export async function viewerToken(client: KubeClient, ns: string): Promise<string> {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const name = 'ui-viewer';
  await client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
  });
  await client.request('POST', `${rbac}/namespaces/${ns}/roles`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name },
      rules: [{ apiGroups: ['packagesync.io'], resources: ['packagesyncs'], verbs: ['get', 'list', 'watch'] }],
    },
  });
  await client.request('POST', `${rbac}/namespaces/${ns}/rolebindings`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    },
  });
  const review = await client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`,
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } } },
  );
  return review.status.token;
}

/** Debian's chromium (hack/install-system-deps.sh), as the browser tests drive it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
}

/** A port free on 127.0.0.1 right now, for a process that must be told its port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
