/**
 * A tenant as a multi-tenant cluster has them: a ServiceAccount with namespaced rights only (PackageSyncs,
 * ConfigMaps and Secrets of its namespace), and a client that acts with its own token, not the suite's admin
 * kubeconfig. The Role is bound to `deployer` too, the ServiceAccount --default-service-account names.
 */
import { mkdtempSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { KubeClient } from '../../src/adapters/kube/client.ts';
import { kube } from './cluster.ts';
import { suiteCluster } from './deploy-rbac.ts';

const dir = mkdtempSync(join(tmpdir(), 'psync-e2e-tenant-'));

export async function tenantClient(ns: string, sa: string): Promise<KubeClient> {
  const admin = await kube();
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}`;
  for (const name of [sa, 'deployer']) {
    await admin.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
    });
  }
  await admin.request('POST', `${rbac}/roles`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'tenant' },
      rules: [
        { apiGroups: ['packagesync.io'], resources: ['packagesyncs'], verbs: ['*'] },
        { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['*'] },
      ],
    },
  });
  await admin.request('POST', `${rbac}/rolebindings`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'tenant' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tenant' },
      subjects: [sa, 'deployer'].map((name) => ({ kind: 'ServiceAccount', name, namespace: ns })),
    },
  });
  const { status } = await admin.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`,
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } } },
  );
  const cluster = await suiteCluster();
  const path = join(dir, `${ns}-${sa}.kubeconfig`);
  await writeFile(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [cluster],
      users: [{ name: sa, user: { token: status.token } }],
      contexts: [{ name: sa, context: { cluster: cluster.name, user: sa, namespace: ns } }],
      'current-context': sa,
    }),
    { mode: 0o600 },
  );
  return KubeClient.create({ kubeconfig: path });
}
