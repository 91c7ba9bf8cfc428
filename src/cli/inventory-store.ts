/**
 * Where `packagesync apply` keeps its inventory (the list of objects it applied, so a later apply can
 * prune what left the package), without a controller:
 *
 * - in the PackageSync's own status.inventory when a PackageSync of that name exists (it must be
 *   suspended: a running controller would fight the CLI), so resuming it carries on from there;
 * - otherwise in the ConfigMap `packagesync-inventory-<name>` in the same namespace, one key per object,
 *   `<namespace>_<name>_<group>_<kind>: <version>`: the ids of status.inventory (Flux's and cli-utils'
 *   object id format) with the version as the value.
 *
 * Both hold the same entries, so objects applied by the CLI carry the same owner labels as those of a
 * PackageSync of the same name and namespace.
 */
import { FIELD_MANAGER, type InventoryEntry, type PackageSync } from '../api/packagesync.ts';
import { sortEntries } from '../core/inventory.ts';
import type { Owner } from '../core/plan/ownership.ts';
import type { KubeObject } from '../core/object.ts';
import { isNotFound } from '../adapters/kube/client.ts';
import type { Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';

export const inventoryConfigMapName = (name: string) => `packagesync-inventory-${name}`;
const MAX_KEY = 253;

export interface InventoryStore {
  /** For messages: `PackageSync team-a/web (status.inventory)`, `ConfigMap team-a/packagesync-inventory-web`. */
  readonly where: string;
  readonly entries: InventoryEntry[];
  /** False when nothing holds an inventory yet (no PackageSync, no ConfigMap). */
  readonly exists: boolean;
  save(entries: InventoryEntry[]): Promise<void>;
}

/** The inventory `diff` and `apply` start from. `forWrite` refuses a PackageSync the controller is running. */
export async function openInventory(cluster: Cluster, owner: Owner, forWrite: boolean): Promise<InventoryStore> {
  const ps = await cluster.packageSyncs.get(owner.namespace, owner.name);
  if (ps) {
    if (forWrite && (!ps.spec.suspend || ps.metadata.deletionTimestamp)) {
      throw new CliError(
        ExitCode.Invalid,
        `PackageSync ${owner.namespace}/${owner.name} exists and the controller reconciles it: suspend it first ` +
          `(packagesync suspend ${owner.name} -n ${owner.namespace}), or apply under another --name`,
      );
    }
    return packageSyncInventory(cluster, ps);
  }
  return configMapInventory(cluster, owner);
}

function packageSyncInventory(cluster: Cluster, read: PackageSync): InventoryStore {
  // the PackageSync as last written: its resourceVersion guards the next write (docs/adr/0008)
  let ps = read;
  return {
    where: `PackageSync ${ps.metadata.namespace}/${ps.metadata.name} (status.inventory)`,
    entries: ps.status?.inventory?.entries ?? [],
    exists: true,
    async save(entries) {
      // A merge patch of status.inventory alone: conditions and revisions stay the controller's.
      ps = (await cluster.packageSyncs.writeStatus(ps, { inventory: { entries: sortEntries(entries) } })) ?? ps;
    },
  };
}

async function configMapInventory(cluster: Cluster, owner: Owner): Promise<InventoryStore> {
  const name = inventoryConfigMapName(owner.name);
  const ref = { group: '', kind: 'ConfigMap', namespace: owner.namespace, name };
  const live = await cluster.objects.get(ref);
  const data = (live?.data ?? {}) as Record<string, string>;
  return {
    where: `ConfigMap ${owner.namespace}/${name}`,
    entries: sortEntries(Object.entries(data).map(([id, v]) => ({ id, v }))),
    exists: live !== undefined,
    async save(entries) {
      const tooLong = entries.find((e) => e.id.length > MAX_KEY);
      if (tooLong) {
        throw new CliError(
          ExitCode.Invalid,
          `object id ${tooLong.id} is longer than a ConfigMap key may be (${MAX_KEY}); use a PackageSync for this package`,
        );
      }
      try {
        await cluster.objects.apply(inventoryConfigMap(owner, entries), { force: true });
      } catch (e) {
        if (!(isNotFound(e) && !(await namespaceExists(cluster, owner.namespace)))) throw e;
        throw new CliError(
          ExitCode.Invalid,
          `namespace ${owner.namespace} does not exist: create it first (the inventory ConfigMap ${name} lives there)`,
        );
      }
    },
  };
}

/** The inventory ConfigMap as applied (server-side, so ids that left the inventory are removed). */
export function inventoryConfigMap(owner: Owner, entries: InventoryEntry[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: inventoryConfigMapName(owner.name),
      namespace: owner.namespace,
      // Not the owner labels: the inventory is not one of the package's objects and must never be pruned.
      labels: { 'app.kubernetes.io/managed-by': FIELD_MANAGER, 'packagesync.io/inventory': 'true' },
      annotations: {
        'packagesync.io/description': `objects applied by: packagesync apply --name ${owner.name} --namespace ${owner.namespace}`,
      },
    },
    data: Object.fromEntries(sortEntries(entries).map((e) => [e.id, e.v])),
  };
}

async function namespaceExists(cluster: Cluster, namespace: string): Promise<boolean> {
  return (await cluster.objects.get({ group: '', kind: 'Namespace', namespace: '', name: namespace })) !== undefined;
}
