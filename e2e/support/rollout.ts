/** Reading and driving PackageSyncSets in e2e tests (docs/rollouts.md): the set, its children, approvals. */
import type { PackageSync } from '../../src/api/packagesync.ts';
import type { PackageSyncSet } from '../../src/api/packagesyncset.ts';
import { eventually, kube } from './cluster.ts';

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
