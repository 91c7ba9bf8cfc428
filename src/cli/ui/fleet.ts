/**
 * The fleet page's rows from PackageSyncs as the shared watch holds them: one state each, counts, filter, sort
 * and paging, all on the server (the browser gets one page, however large the fleet). Pure.
 */
import type { Condition, PackageSync } from '../../api/packagesync.ts';
import { matchesLabelSelector } from '../../core/plan/label-selector.ts';
import { conditionOf } from '../../core/status.ts';
import { sourceAddress } from '../../core/source-address.ts';
import { FLEET_STATES, type FleetPage, type FleetQuery, type FleetRow, type FleetState } from './api-types.ts';

/**
 * One state per PackageSync, the most telling first: suspended (nothing happens), then Ready=True, then the
 * kstatus abnormal-true conditions (Stalled: stuck until something changes; Reconciling: work under way),
 * then Ready=False (Failed, will be retried). Not yet seen by a controller counts as Reconciling.
 */
export function fleetState(ps: PackageSync): FleetState {
  if (ps.spec?.suspend) return 'Suspended';
  return kstatusState(ps.status, ps.metadata.generation);
}

/** The same order for anything with kstatus conditions (a PackageSyncSet too): Ready, Stalled, Reconciling, Failed. */
export function kstatusState(
  status: { conditions?: readonly Condition[]; observedGeneration?: number } | undefined,
  generation: number | undefined,
): Exclude<FleetState, 'Suspended'> {
  const of = (type: string) => status?.conditions?.find((c) => c.type === type)?.status;
  if (of('Ready') === 'True' && status?.observedGeneration === generation) return 'Ready';
  if (of('Stalled') === 'True') return 'Stalled';
  if (of('Reconciling') === 'True') return 'Reconciling';
  if (of('Ready') === 'False') return 'Failed';
  return 'Reconciling';
}

/**
 * Rows by object: the watch replaces an object when it changes, so a row computed once stays right for as long as
 * its object is the one held, and a page of 10,000 reads 10,000 rows without recomputing them.
 */
const rows = new WeakMap<PackageSync, FleetRow>();

export function fleetRow(ps: PackageSync): FleetRow {
  let row = rows.get(ps);
  if (!row) rows.set(ps, (row = computeRow(ps)));
  return row;
}

function computeRow(ps: PackageSync): FleetRow {
  const ready = conditionOf(ps.status, 'Ready');
  return {
    namespace: ps.metadata.namespace,
    name: ps.metadata.name,
    state: fleetState(ps),
    reason: ready?.reason ?? 'NotObserved',
    message: ready?.message ?? 'the controller has not reconciled it yet',
    revision: ps.status?.lastAppliedRevision,
    objects: ps.status?.objects,
    createdAt: (ps.metadata as { creationTimestamp?: string }).creationTimestamp,
  };
}

const STATE_ORDER = new Map(FLEET_STATES.map((s, i) => [s, i]));

/**
 * Code-unit order, as kubectl sorts names: Kubernetes names are lowercase ASCII, where it equals alphabetical
 * order, and it is ~10× cheaper than localeCompare (a 10,000-row sort went from ~25 ms to ~3 ms).
 */
const byCode = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const COMPARE: Record<FleetQuery['sort'], (a: FleetRow, b: FleetRow) => number> = {
  name: (a, b) => byCode(a.name, b.name) || byCode(a.namespace, b.namespace),
  namespace: (a, b) => byCode(a.namespace, b.namespace) || byCode(a.name, b.name),
  state: (a, b) => STATE_ORDER.get(a.state)! - STATE_ORDER.get(b.state)! || COMPARE.namespace(a, b),
  // newest first reads as "age ascending", as kubectl's AGE column
  age: (a, b) => byCode(b.createdAt ?? '', a.createdAt ?? '') || COMPARE.namespace(a, b),
};

/**
 * One page of the fleet for `query`. The counts are of the namespace chosen (all when none), before the state, text
 * and label filters, so the state buttons always say what each would show; the namespaces are of everything listed.
 */
export function fleetPage(all: Iterable<PackageSync>, query: FleetQuery): Omit<FleetPage, 'refused'> {
  const counts = Object.fromEntries(FLEET_STATES.map((s) => [s, 0])) as Record<FleetState, number>;
  const namespaces = new Set<string>();
  const text = query.q?.trim().toLowerCase();
  const rows: FleetRow[] = [];
  for (const ps of all) {
    const row = fleetRow(ps);
    namespaces.add(row.namespace);
    if (query.namespace && row.namespace !== query.namespace) continue;
    counts[row.state]++;
    if (query.state && row.state !== query.state) continue;
    if (text && !matches(row, ps, text)) continue;
    if (query.label && !matchesLabelSelector(query.label, ps.metadata.labels ?? {})) continue;
    rows.push(row);
  }
  rows.sort(COMPARE[query.sort]);
  if (query.desc === '1') rows.reverse();
  const start = (query.page - 1) * query.pageSize;
  return {
    items: rows.slice(start, start + query.pageSize),
    total: rows.length,
    page: query.page,
    pageSize: query.pageSize,
    counts,
    namespaces: [...namespaces].sort(),
  };
}

function matches(row: FleetRow, ps: PackageSync, text: string): boolean {
  return [
    `${row.namespace}/${row.name}`,
    row.reason,
    row.message,
    sourceAddress(ps.spec?.source).address,
    row.revision ?? '',
  ].some((field) => field.toLowerCase().includes(text));
}
