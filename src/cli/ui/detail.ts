/**
 * One PackageSync as its page shows it, read as the viewer (access.ts: RBAC decides what they see): the
 * PackageSync itself, its inventory's objects with live health drawn as a graph (package-graph.ts) with what the
 * workloads own, drift with the fields' current managers, its events, and `packagesync why`'s chain (the same
 * function the command runs). Never a Secret's content: Secrets in the inventory are not read.
 */
import type { Objects } from '../../engine/ports.ts';
import type { PackageSync } from '../../api/packagesync.ts';
import type { DriftReport } from '../../api/drift-schema.ts';
import { computeHealth } from '../../core/health/index.ts';
import { refOfEntry } from '../../core/inventory.ts';
import { describeRef, type KubeObject, type ObjectRef } from '../../core/object.ts';
import { conditionOf } from '../../core/status.ts';
import type { Cluster } from '../cluster.ts';
import { errorMessage } from '../exit-codes.ts';
import { withTargetObjects } from '../target-objects.ts';
import { whyLines } from '../why.ts';
import { heldRevision } from './actions.ts';
import type { DriftView, EventRecord, PackageSyncDetail } from './api-types.ts';
import { managersOf } from './field-managers.ts';
import { fleetState } from './fleet.ts';
import { packageGraph, type GraphItem } from './package-graph.ts';
import { sourceAddress } from '../../core/source-address.ts';

/** Objects whose health one page load reads (one GET each); the rest are counted, not shown. */
export const INVENTORY_SHOWN = 200;
const EVENTS_SHOWN = 50;
/** Workload kinds whose ReplicaSets and Pods the graph draws (apps/v1 and batch/v1 owners of Pods). */
const OWNERS = new Set(['apps/Deployment', 'apps/StatefulSet', 'apps/DaemonSet', 'apps/ReplicaSet', 'batch/Job']);
/** Namespaces whose ReplicaSets and Pods one page load lists. */
const OWNED_NAMESPACES = 10;

export async function packageSyncDetail(cluster: Cluster, ps: PackageSync): Promise<PackageSyncDetail> {
  const entries = ps.status?.inventory?.entries ?? [];
  const refs = entries.flatMap((e) => {
    const r = refOfEntry(e);
    return r.ok ? [r.value] : [];
  });
  const [read, events, why] = await Promise.all([
    readObjects(cluster, ps, refs.slice(0, INVENTORY_SHOWN)),
    packageSyncEvents(cluster, ps),
    whyLines(cluster, ps).catch((e: unknown) => [`cannot follow the chain: ${errorMessage(e)}`]),
  ]);
  const spec = ps.spec;
  const ready = conditionOf(ps.status, 'Ready');
  const held = heldRevision(ps);
  const graph = packageGraph(read.items, read.owned);
  graph.notes.push(...read.notes);
  const liveByName = new Map(read.items.flatMap((i) => (i.live ? [[describeRef(i.ref), i.live] as const] : [])));
  return {
    namespace: ps.metadata.namespace,
    name: ps.metadata.name,
    state: fleetState(ps),
    suspended: spec.suspend === true,
    generation: ps.metadata.generation,
    observedGeneration: ps.status?.observedGeneration,
    labels: ps.metadata.labels ?? {},
    source: {
      url: spec.source.url,
      ...sourceAddress(spec.source),
      path: spec.source.path ?? '.',
    },
    lastAppliedRevision: ps.status?.lastAppliedRevision,
    lastAttemptedRevision: ps.status?.lastAttemptedRevision,
    conditions: ps.status?.conditions ?? [],
    history: ps.status?.history ?? [],
    failures: ps.status?.failures ?? [],
    objects: ps.status?.objects,
    inventory: read.items.map(({ live: _live, ref, ...h }) => ({ ...ref, ...h })),
    inventoryTotal: ps.status?.inventory?.count ?? entries.length,
    events,
    why,
    graph,
    ...(ps.status?.drift ? { drift: withManagers(ps.status.drift, liveByName) } : {}),
    ...(ps.status?.lastDriftCorrection
      ? { lastDriftCorrection: withManagers(ps.status.lastDriftCorrection, liveByName) }
      : {}),
    ...(held ? { pruneHeld: { revision: held, message: ready?.message ?? '' } } : {}),
  };
}

/** Each drifted field with the managers that hold it in the live object now. */
function withManagers(report: DriftReport, live: Map<string, KubeObject>): DriftView {
  return {
    ...report,
    objects: report.objects.map((o) => {
      const obj = live.get(o.object);
      if (!obj) return o;
      return { ...o, changedBy: Object.fromEntries(o.paths.map((p) => [p, managersOf(obj, p)])) };
    }),
  };
}

interface Read {
  items: GraphItem[];
  owned: KubeObject[];
  notes: string[];
}

async function readObjects(cluster: Cluster, ps: PackageSync, refs: ObjectRef[]): Promise<Read> {
  if (refs.length === 0) return { items: [], owned: [], notes: [] };
  try {
    return await withTargetObjects(cluster, ps, async (objects) => {
      const items = await Promise.all(refs.map((ref) => readOne(objects, ref)));
      const { owned, notes } = await ownedObjects(objects, items);
      return { items, owned, notes };
    });
  } catch (e) {
    const items = refs.map((ref) => ({ ref, health: 'Unknown' as const, message: errorMessage(e) }));
    return { items, owned: [], notes: [] };
  }
}

async function readOne(objects: Objects, ref: ObjectRef): Promise<GraphItem> {
  if (ref.group === '' && ref.kind === 'Secret')
    return { ref, health: 'Unknown', message: 'Secrets are not read by the UI' };
  try {
    const live = await objects.get(ref);
    if (!live) return { ref, health: 'NotFound', message: 'not in the cluster' };
    const h = computeHealth(live);
    return { ref, live, health: h.status, ...(h.reason ? { reason: h.reason } : {}), message: h.message ?? '' };
  } catch (e) {
    return { ref, health: 'Unknown', message: errorMessage(e) };
  }
}

/** The ReplicaSets and Pods of the namespaces holding workloads: one list of each per namespace. */
async function ownedObjects(objects: Objects, items: GraphItem[]): Promise<{ owned: KubeObject[]; notes: string[] }> {
  const namespaces = [
    ...new Set(items.filter((i) => i.live && OWNERS.has(`${i.ref.group}/${i.ref.kind}`)).map((i) => i.ref.namespace)),
  ];
  if (namespaces.length === 0) return { owned: [], notes: [] };
  const notes: string[] = [];
  if (namespaces.length > OWNED_NAMESPACES) notes.push(`owned objects shown for ${OWNED_NAMESPACES} namespaces only`);
  const kinds = [
    ['apps', 'ReplicaSet'],
    ['', 'Pod'],
  ] as const;
  const lists = await Promise.all(
    namespaces.slice(0, OWNED_NAMESPACES).flatMap((ns) =>
      kinds.map(async ([group, kind]) => {
        try {
          const m = await objects.mappingFor(group, kind);
          if (!m.ok) return [];
          return await objects.list(m.value, ns, '');
        } catch (e) {
          notes.push(`${kind}s in ${ns}: ${errorMessage(e)}`);
          return [];
        }
      }),
    ),
  );
  return { owned: lists.flat(), notes };
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

const packageSyncEvents = (cluster: Cluster, ps: PackageSync) =>
  objectEvents(cluster, ps.metadata.namespace, 'PackageSync', ps.metadata.name);

/** The newest events about one object (a PackageSync, a PackageSyncSet), read as the viewer. */
export async function objectEvents(
  cluster: Cluster,
  namespace: string,
  kind: string,
  name: string,
): Promise<EventRecord[]> {
  try {
    const list = await cluster.client.request<{ items: KubeEvent[] }>(
      'GET',
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
      { query: { fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` } },
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
