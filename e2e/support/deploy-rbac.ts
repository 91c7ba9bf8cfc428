/**
 * deploy/'s ServiceAccount and RBAC applied as renamed copies (a suffix on cluster-scoped names, the
 * ServiceAccount and the leader-election Role in a test namespace), so a test can run the controller as
 * it runs in its pod without clashing with an installed copy or another test; and a token for that
 * ServiceAccount from the TokenRequest API.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../../src/core/object.ts';
import { eventually, kube, kubeconfig, kubectl } from './cluster.ts';

const deploy = resolve(import.meta.dirname, '../../deploy');
export const SA = 'packagesync-controller';
/** The Lease deploy/rbac.yaml's leader-election Role names. */
export const LEASE = 'packagesync-controller-leader';

type Manifest = KubeObject & {
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; namespace?: string }[];
  aggregationRule?: { clusterRoleSelectors?: { matchLabels?: Record<string, string> }[] };
};

export interface DeployRbac {
  namespace: string;
  /** `kind/name` of the cluster-scoped copies, for `kubectl delete`. */
  clusterScoped: string[];
  dispose(): Promise<void>;
}

/** The deploy RBAC, renamed so that it cannot clash with an installed copy or another run. */
export async function renamedDeployManifests(namespace: string, suffix: string): Promise<KubeObject[]> {
  const docs = [
    ...parseAllDocuments(await readFile(join(deploy, 'rbac.yaml'), 'utf8')),
    ...parseAllDocuments(await readFile(join(deploy, 'serviceaccount.yaml'), 'utf8')),
  ].map((d) => d.toJS() as Manifest);
  const aggregate = 'packagesync.io/aggregate-to-applier';
  for (const o of docs) {
    if (o.metadata.namespace) o.metadata.namespace = namespace;
    if (o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding') o.metadata.name = `${o.metadata.name}-${suffix}`;
    if (o.roleRef?.kind === 'ClusterRole') o.roleRef.name = `${o.roleRef.name}-${suffix}`;
    for (const s of o.subjects ?? []) if (s.kind === 'ServiceAccount') s.namespace = namespace;
    if (o.metadata.labels?.[aggregate]) {
      delete o.metadata.labels[aggregate];
      o.metadata.labels[`${aggregate}-${suffix}`] = 'true';
    }
    for (const sel of o.aggregationRule?.clusterRoleSelectors ?? [])
      sel.matchLabels = { [`${aggregate}-${suffix}`]: 'true' };
  }
  return docs;
}

/** Applies the renamed deploy RBAC with the ServiceAccount in `namespace`; waits for the applier role to aggregate. */
export async function applyDeployRbac(namespace: string, tmp: string): Promise<DeployRbac> {
  const suffix = randomBytes(3).toString('hex');
  const docs = await renamedDeployManifests(namespace, suffix);
  const clusterScoped = docs
    .filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')
    .map((o) => `${o.kind.toLowerCase()}/${o.metadata.name}`);
  const manifests = join(tmp, `rbac-${suffix}.yaml`);
  await writeFile(manifests, docs.map((o) => `---\n${stringify(o)}`).join(''));
  await kubectl('apply', '--server-side', '-f', manifests);
  // the control plane fills the aggregated applier role from the roles labelled for it
  await eventually('the applier role aggregated', async () => {
    const role = await (
      await kube()
    ).request<{ rules?: unknown[] }>(
      'GET',
      `/apis/rbac.authorization.k8s.io/v1/clusterroles/packagesync-applier-${suffix}`,
    );
    return (role.rules?.length ?? 0) >= 2;
  });
  return {
    namespace,
    clusterScoped,
    async dispose() {
      await kubectl('delete', '--ignore-not-found', ...clusterScoped).catch(() => undefined);
    },
  };
}

/** A token of the controller's ServiceAccount in `namespace`, from the TokenRequest API (as the kubelet gets it). */
export async function serviceAccountToken(namespace: string, expirationSeconds = 3600): Promise<string> {
  const review = await (
    await kube()
  ).request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${SA}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } },
  });
  return review.status.token;
}

/** The suite kubeconfig's cluster entry: server address and CA. */
export async function suiteCluster(): Promise<{ name: string; cluster: Record<string, unknown> }> {
  const config = parse(await readFile(kubeconfig(), 'utf8')) as {
    'current-context': string;
    contexts: { name: string; context: { cluster: string } }[];
    clusters: { name: string; cluster: Record<string, unknown> }[];
  };
  const context = config.contexts.find((c) => c.name === config['current-context'])!;
  return config.clusters.find((c) => c.name === context.context.cluster)!;
}

/** A kubeconfig holding only the ServiceAccount's token and the cluster's address and CA. */
export async function tokenKubeconfig(namespace: string, path: string): Promise<string> {
  const token = await serviceAccountToken(namespace);
  const cluster = await suiteCluster();
  await writeFile(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [cluster],
      users: [{ name: SA, user: { token } }],
      contexts: [{ name: SA, context: { cluster: cluster.name, user: SA } }],
      'current-context': SA,
    }),
    { mode: 0o600 },
  );
  return path;
}
