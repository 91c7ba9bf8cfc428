/** Reading and driving PackageSyncSets in e2e tests (docs/rollouts.md): the set, its children, approvals. */
import { readFileSync } from 'node:fs';
import type { PackageSync } from '../../src/api/packagesync.ts';
import type { PackageSyncSet, SetStatus } from '../../src/api/packagesyncset.ts';
import { eventually, kube, kubeconfig, kubectl } from './cluster.ts';

export const setsPath = (ns: string) => `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncsets`;

export async function createSet(ns: string, body: Record<string, unknown>): Promise<void> {
  await (await kube()).request('POST', setsPath(ns), { body });
}

export async function getSet(ns: string, name: string): Promise<PackageSyncSet> {
  return (await kube()).request<PackageSyncSet>('GET', `${setsPath(ns)}/${name}`);
}

export async function patchSet(ns: string, name: string, body: Record<string, unknown>): Promise<void> {
  await (
    await kube()
  ).request('PATCH', `${setsPath(ns)}/${name}`, { contentType: 'application/merge-patch+json', body });
}

/** The set's child PackageSyncs (by its label). */
export async function children(ns: string, set: string): Promise<PackageSync[]> {
  const list = await (
    await kube()
  ).request<{ items: PackageSync[] }>('GET', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs`, {
    query: { labelSelector: `packagesync.io/set=${set}` },
  });
  return list.items;
}

/** Sets packagesync.io/approve, as `kubectl annotate` in docs/rollouts.md does. */
export const approve = (ns: string, name: string, value: string) =>
  patchSet(ns, name, { metadata: { annotations: { 'packagesync.io/approve': value } } });

/** The set once `pred` holds of it. */
export const waitSet = (
  ns: string,
  name: string,
  what: string,
  pred: (s: PackageSyncSet) => boolean,
  timeoutMs = 120_000,
): Promise<PackageSyncSet> =>
  eventually(
    what,
    async () => {
      const s = await getSet(ns, name);
      return pred(s) && s;
    },
    { timeoutMs, intervalMs: 250 },
  );

/**
 * A registered cluster in `ns`: a kubeconfig Secret labelled packagesync.io/secret-type=cluster naming this control
 * plane — or, with `server`, the same kubeconfig aimed elsewhere (a closed port: a cluster that never answers).
 */
export async function clusterSecret(ns: string, name: string, labels: Record<string, string>, server?: string) {
  let value = readFileSync(kubeconfig(), 'utf8');
  if (server) value = value.replace(/server: https:\/\/[^\s]+/, `server: ${server}`);
  await (
    await kube()
  ).request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { metadata: { name, labels: { 'packagesync.io/secret-type': 'cluster', ...labels } }, stringData: { value } },
  });
}

/** Writes a set's status through its status subresource, as the controller would (for a set no controller runs). */
export async function writeSetStatus(ns: string, name: string, status: SetStatus): Promise<void> {
  await (
    await kube()
  ).request('PATCH', `${setsPath(ns)}/${name}/status`, {
    contentType: 'application/merge-patch+json',
    body: { status },
  });
}

/** The Events about set `name` (kubectl get events), reason and message. */
export async function setEvents(ns: string, name: string): Promise<{ reason: string; message: string }[]> {
  const out = await kubectl(
    'get',
    'events',
    '-n',
    ns,
    '--field-selector',
    `involvedObject.kind=PackageSyncSet,involvedObject.name=${name}`,
    '-o',
    'json',
  );
  return (JSON.parse(out) as { items: { reason: string; message: string }[] }).items;
}
