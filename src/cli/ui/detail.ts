/**
 * One PackageSync as its page shows it, read as the user (their kubeconfig: RBAC decides what they see): the
 * PackageSync itself, its inventory's objects with live health, its events, and `packagesync why`'s chain
 * (the same function the command runs). Never a Secret's content: Secrets in the inventory are not read.
 */
import type { PackageSync } from '../../api/packagesync.ts';
import { computeHealth } from '../../core/health/index.ts';
import { refOfEntry } from '../../core/inventory.ts';
import type { ObjectRef } from '../../core/object.ts';
import type { Cluster } from '../cluster.ts';
import { errorMessage } from '../exit-codes.ts';
import { withTargetObjects } from '../target-objects.ts';
import { whyLines } from '../why.ts';
import type { EventRecord, InventoryObject, PackageSyncDetail } from './api-types.ts';
import { fleetState } from './fleet.ts';

/** Objects whose health one page load reads (one GET each); the rest are counted, not shown. */
export const INVENTORY_SHOWN = 200;
const EVENTS_SHOWN = 50;

export async function packageSyncDetail(cluster: Cluster, ps: PackageSync): Promise<PackageSyncDetail> {
  const entries = ps.status?.inventory?.entries ?? [];
  const refs = entries.flatMap((e) => {
    const r = refOfEntry(e);
    return r.ok ? [r.value] : [];
  });
  const [inventory, events, why] = await Promise.all([
    inventoryHealth(cluster, ps, refs.slice(0, INVENTORY_SHOWN)),
    packageSyncEvents(cluster, ps),
    whyLines(cluster, ps).catch((e: unknown) => [`cannot follow the chain: ${errorMessage(e)}`]),
  ]);
  const spec = ps.spec;
  return {
    namespace: ps.metadata.namespace,
    name: ps.metadata.name,
    state: fleetState(ps),
    suspended: spec.suspend === true,
    generation: ps.metadata.generation,
    observedGeneration: ps.status?.observedGeneration,
    source: {
      url: spec.source.url,
      oci: spec.source.oci?.url,
      ref: spec.source.ref as Record<string, string> | undefined,
      path: spec.source.path ?? '.',
    },
    lastAppliedRevision: ps.status?.lastAppliedRevision,
    lastAttemptedRevision: ps.status?.lastAttemptedRevision,
    conditions: ps.status?.conditions ?? [],
    history: ps.status?.history ?? [],
    failures: ps.status?.failures ?? [],
    objects: ps.status?.objects,
    inventory,
    inventoryTotal: ps.status?.inventory?.count ?? entries.length,
    events,
    why,
  };
}

async function inventoryHealth(cluster: Cluster, ps: PackageSync, refs: ObjectRef[]): Promise<InventoryObject[]> {
  if (refs.length === 0) return [];
  const one = (ref: ObjectRef) => ({ kind: ref.kind, group: ref.group, namespace: ref.namespace, name: ref.name });
  try {
    return await withTargetObjects(cluster, ps, (objects) =>
      Promise.all(
        refs.map(async (ref): Promise<InventoryObject> => {
          if (ref.group === '' && ref.kind === 'Secret')
            return { ...one(ref), health: 'Unknown', message: 'Secrets are not read by the UI' };
          try {
            const live = await objects.get(ref);
            if (!live) return { ...one(ref), health: 'NotFound', message: 'not in the cluster' };
            const h = computeHealth(live);
            return { ...one(ref), health: h.status, reason: h.reason, message: h.message };
          } catch (e) {
            return { ...one(ref), health: 'Unknown', message: errorMessage(e) };
          }
        }),
      ),
    );
  } catch (e) {
    return refs.map((ref) => ({ ...one(ref), health: 'Unknown', message: errorMessage(e) }));
  }
}

interface KubeEvent {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  firstTimestamp?: string;
  metadata: { creationTimestamp?: string };
  source?: { component?: string };
  reportingComponent?: string;
}

async function packageSyncEvents(cluster: Cluster, ps: PackageSync): Promise<EventRecord[]> {
  try {
    const list = await cluster.client.request<{ items: KubeEvent[] }>(
      'GET',
      `/api/v1/namespaces/${encodeURIComponent(ps.metadata.namespace)}/events`,
      { query: { fieldSelector: `involvedObject.kind=PackageSync,involvedObject.name=${ps.metadata.name}` } },
    );
    return list.items
      .map((e) => ({
        type: e.type ?? 'Normal',
        reason: e.reason ?? '',
        message: e.message ?? '',
        count: e.count ?? 1,
        lastSeen: e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp,
        from: e.source?.component || e.reportingComponent,
      }))
      .sort((a, b) => (b.lastSeen ?? '').localeCompare(a.lastSeen ?? ''))
      .slice(0, EVENTS_SHOWN);
  } catch (e) {
    return [{ type: 'Warning', reason: 'EventsUnreadable', message: errorMessage(e), count: 1 }];
  }
}
