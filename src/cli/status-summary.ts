/**
 * A PackageSync's status as people and scripts read it: one summary record (the `--output json` shape),
 * a table for many, a block for one. Pure: the objects come in, text goes out.
 */
import type { HistoryEntry, ObjectCounts, ObjectFailure, PackageSync } from '../api/packagesync.ts';
import { conditionOf } from '../core/status.ts';
import { sourceAddress } from '../core/source-address.ts';

export interface StatusSummary {
  namespace: string;
  name: string;
  /** Ready's status; Unknown also before the controller first saw it. */
  ready: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  suspended: boolean;
  /** Ready=True for the current generation: what `status` exits 0 on. */
  upToDate: boolean;
  generation?: number;
  observedGeneration?: number;
  /** url and ref: the git fields as written (absent for OCI and chart sources); address and version: any kind. */
  source: { url: string; ref?: Record<string, string>; path: string; address: string; version: string };
  lastAppliedRevision?: string;
  lastAttemptedRevision?: string;
  lastHandledReconcileAt?: string;
  objects?: ObjectCounts;
  inventoryCount: number;
  conditions: { type: string; status: string; reason: string; message: string }[];
  history: HistoryEntry[];
  /** Every failure of the last failed reconcile (status.failures). */
  failures: ObjectFailure[];
  createdAt?: string;
}

export function summarize(ps: PackageSync): StatusSummary {
  const ready = conditionOf(ps.status, 'Ready');
  const spec = ps.spec as Partial<PackageSync['spec']>;
  const generation = ps.metadata.generation;
  const observedGeneration = ps.status?.observedGeneration;
  return {
    namespace: ps.metadata.namespace,
    name: ps.metadata.name,
    ready: ready?.status ?? 'Unknown',
    reason: ready?.reason ?? 'NotObserved',
    message: ready?.message ?? 'the controller has not reconciled it yet',
    suspended: spec.suspend === true,
    upToDate: ready?.status === 'True' && observedGeneration === generation,
    generation,
    observedGeneration,
    source: {
      url: spec.source?.url ?? '',
      ...(spec.source?.ref ? { ref: spec.source.ref as Record<string, string> } : {}),
      path: spec.source?.path ?? '.',
      ...sourceAddress(spec.source),
    },
    lastAppliedRevision: ps.status?.lastAppliedRevision,
    lastAttemptedRevision: ps.status?.lastAttemptedRevision,
    lastHandledReconcileAt: ps.status?.lastHandledReconcileAt,
    objects: ps.status?.objects,
    // a spilled inventory (ADR 0027) says its size in count: a listed PackageSync's shards are not read
    inventoryCount: ps.status?.inventory?.count ?? ps.status?.inventory?.entries.length ?? 0,
    conditions: (ps.status?.conditions ?? []).map(({ type, status, reason, message }) => ({
      type,
      status,
      reason,
      message,
    })),
    history: ps.status?.history ?? [],
    failures: ps.status?.failures ?? [],
    createdAt: (ps.metadata as { creationTimestamp?: string }).creationTimestamp,
  };
}

/** `main@sha1:3f2a9c01b7de` — enough of the SHA to find the commit, short enough for a table. */
export function shortRevision(revision: string | undefined): string {
  if (!revision) return '-';
  return revision.replace(/(sha1|sha256):([0-9a-f]{12})[0-9a-f]+/, '$1:$2');
}

/** kubectl's age: 45s, 12m, 5h, 3d. */
export function age(from: string | undefined, now: Date): string {
  if (!from) return '-';
  const s = Math.max(0, Math.floor((now.getTime() - Date.parse(from)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

const objectsColumn = (s: StatusSummary) =>
  s.objects ? `${s.objects.current}/${s.objects.total}` : s.inventoryCount ? `?/${s.inventoryCount}` : '-';

export function formatTable(summaries: StatusSummary[], now: Date, withNamespace: boolean): string {
  const header = ['NAME', 'READY', 'REASON', 'REVISION', 'OBJECTS', 'AGE', 'MESSAGE'];
  const rows = summaries.map((s) => [
    s.name,
    s.suspended ? `${s.ready} (suspended)` : s.ready,
    s.reason,
    shortRevision(s.lastAppliedRevision),
    objectsColumn(s),
    age(s.createdAt, now),
    s.message.length > 100 ? `${s.message.slice(0, 99)}…` : s.message,
  ]);
  const table = [header, ...rows].map((r, i) =>
    withNamespace ? [i === 0 ? 'NAMESPACE' : summaries[i - 1]!.namespace, ...r] : r,
  );
  const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  return (
    table.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('   ')).join('\n') +
    '\n'
  );
}

export function formatDetail(s: StatusSummary, now: Date): string {
  const lines = [`PackageSync ${s.namespace}/${s.name}`];
  const field = (label: string, value: string) => lines.push(`  ${`${label}:`.padEnd(13)} ${value}`);
  field('Ready', `${s.ready} (${s.reason})${s.upToDate || s.ready !== 'True' ? '' : ' for an older generation'}`);
  field('Message', s.message);
  field('Suspended', s.suspended ? 'yes: the controller does nothing until resumed' : 'no');
  field('Source', `${s.source.address} (${s.source.version}, path ${s.source.path})`);
  field('Applied', s.lastAppliedRevision ?? '-');
  if (s.lastAttemptedRevision && s.lastAttemptedRevision !== s.lastAppliedRevision)
    field('Attempted', s.lastAttemptedRevision);
  field('Generation', `${s.generation ?? '-'} (observed ${s.observedGeneration ?? '-'})`);
  const o = s.objects;
  field(
    'Objects',
    o
      ? `${o.total} total: ${o.current} current, ${o.inProgress} in progress, ${o.failed} failed, ` +
          `${o.terminating} terminating, ${o.unknown} unknown`
      : '-',
  );
  field('Inventory', `${s.inventoryCount} object${s.inventoryCount === 1 ? '' : 's'}`);
  field('Conditions', s.conditions.map((c) => `${c.type}=${c.status} (${c.reason})`).join(', ') || '-');
  if (s.failures.length > 0) {
    lines.push('  Failures:');
    for (const f of s.failures) lines.push(`    ${f.reason}: ${f.message}`);
  }
  if (s.history.length > 0) {
    lines.push('  History:');
    for (const h of s.history.slice(0, 5)) {
      lines.push(
        `    ${age(h.startedAt, now).padStart(4)} ago  ${shortRevision(h.revision)}  ${h.result}  ${h.durationSeconds}s  ` +
          `${h.created} created, ${h.configured} configured, ${h.pruned} pruned`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
