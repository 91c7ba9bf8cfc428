/**
 * Deployment records from successive PackageSync statuses (docs/adr/0040): one record per PackageSync and
 * revision, moving started → applied → healthy | failed | superseded. The engine is not asked: every status write
 * comes back through the controller's PackageSync watch, and status says enough. A resync of the same revision
 * (Progressing again, Ready again) changes nothing, so a unit that stays failed is reported once, not per retry
 * (the complaint of notification-controller#445: the same alert every few minutes).
 */
import type { Status } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import { conditionOf } from '../status.ts';
import type { PlanActions } from './plan-actions.ts';

export type Phase = 'started' | 'applied' | 'healthy' | 'failed' | 'superseded';
/** What a message says: a record's phase, or "resolved" (healthy again after a failure message was sent). */
export type MessageKind = Phase | 'resolved';
export const MESSAGE_KINDS: readonly MessageKind[] = [
  'started',
  'applied',
  'healthy',
  'failed',
  'superseded',
  'resolved',
];

/** What one status says about the revision it is about. */
export interface StatusView {
  revision?: string;
  phase?: Exclude<Phase, 'superseded'>;
  reason?: string;
  message?: string;
  /** The first link of status.cause, as `Kind/name: reason: message` (the `why`). */
  cause?: string;
  counts?: { created: number; configured: number; pruned: number };
}

/** Reads a status: which phase its revision is in, and why. */
export function viewOf(status: Status | undefined): StatusView {
  const ready = conditionOf(status, 'Ready');
  if (!status || !ready) return {};
  const counts = (revision: string | undefined) => {
    const h = status.history?.[0];
    return h && h.revision === revision
      ? { created: h.created, configured: h.configured, pruned: h.pruned }
      : undefined;
  };
  if (ready.status === 'True') {
    const revision = status.lastAppliedRevision;
    return { revision, phase: 'healthy', reason: ready.reason, message: ready.message, counts: counts(revision) };
  }
  const revision = status.lastAttemptedRevision;
  if (ready.status === 'False') {
    // waiting for a dependency is not a failure of this revision: nothing to say yet
    if (ready.reason === Reason.DependencyNotReady) return { revision };
    const first = status.cause?.[0];
    const cause = first
      ? `${first.kind}/${first.name}${first.reason ? `: ${first.reason}` : ''}${first.message ? `: ${first.message}` : ''}`
      : undefined;
    return {
      revision,
      phase: 'failed',
      reason: ready.reason,
      message: ready.message,
      ...(cause ? { cause } : {}),
      counts: counts(revision),
    };
  }
  if (ready.reason === Reason.HealthCheckPending) return { revision, phase: 'applied', message: ready.message };
  if (ready.reason === Reason.Progressing) return { revision, phase: 'started', message: ready.message };
  return { revision };
}

/** What one Notifier remembers of one PackageSync (kept in its outbox ConfigMap). */
export interface RecordMemory {
  uid: string;
  /** The current record's revision ('' when a failure came before any revision was known). */
  revision: string;
  phase: Phase;
  /** Messages enqueued for this PackageSync so far: the last part of every message id. */
  seq: number;
  /** The reason of the current failure, when failed. */
  reason?: string;
  /** A failure message was sent and no "resolved" since. */
  alertOpen?: boolean;
  /** The current failure's message was held back by the quiet period: its recovery is not news either. */
  quieted?: boolean;
  /** This revision was healthy once: a later quiet failure and its recovery are a flap, not news. */
  wasHealthy?: boolean;
  /** Failure key (reason) → when a failure message with it was last sent (epoch ms): the quiet period. */
  alerts?: Record<string, number>;
}

/** One message to deliver: the record as it is now, with the id receivers dedupe by. */
export interface RecordMessage {
  /** `<uid>/<revision>#<seq>`: stable across retries, restarts and leader changes. */
  id: string;
  kind: MessageKind;
  namespace: string;
  name: string;
  uid: string;
  revision: string;
  reason?: string;
  message?: string;
  cause?: string;
  counts?: { created: number; configured: number; pruned: number };
  /** superseded: the revision that replaced it. */
  supersededBy?: string;
  /** When the transition was observed (ISO 8601). */
  at: string;
  /** A forge Notifier's comment on the pull request (pull-request.ts); otherwise the provider's usual message. */
  channel?: 'pull-request';
  /** A comment: what the revision's apply did, object by object (plan-actions.ts), or why that is not known. */
  plan?: PlanActions;
  planMissing?: string;
}

/** What a Notifier wants sent. */
export interface RecordPolicy {
  kinds: ReadonlySet<MessageKind>;
  quietPeriodMs: number;
  /** Commit statuses mirror the commit's state: no quiet period applies to them. */
  mirrorsState: boolean;
  /** When the Notifier was created (epoch ms): what became healthy since, it should have seen. */
  watchingSince?: number;
}

export interface PackageSyncView {
  namespace: string;
  name: string;
  uid: string;
  status: Status | undefined;
}

const ORDER: Record<Phase, number> = { started: 0, applied: 1, healthy: 2, failed: 2, superseded: 3 };

/**
 * The next memory and the messages to enqueue, given what this Notifier remembers and the status now.
 * Pure: `now` is epoch ms.
 */
export function observe(
  memory: RecordMemory | undefined,
  ps: PackageSyncView,
  policy: RecordPolicy,
  now: number,
): { memory: RecordMemory | undefined; messages: RecordMessage[] } {
  const view = viewOf(ps.status);
  const at = new Date(now).toISOString();
  // a PackageSync recreated under the same name is another one: forget the old one's records
  const mem = memory && memory.uid === ps.uid ? { ...memory } : undefined;
  if (!view.phase) return { memory: mem, messages: [] };
  const revision = view.revision ?? mem?.revision ?? '';
  // first sight of a unit already healthy before this Notifier watched (a new Notifier): nothing happened to tell.
  // One that became healthy since is a record this Notifier's outbox never got (the leader died, or the outbox
  // write was refused, between the status write and its own): its ending is still news.
  if (!mem && view.phase === 'healthy' && !becameReadySince(ps.status, policy.watchingSince)) {
    return { memory: { uid: ps.uid, revision, phase: 'healthy', seq: 0, wasHealthy: true }, messages: [] };
  }
  const next: RecordMemory = mem ?? { uid: ps.uid, revision, phase: view.phase, seq: 0 };
  const messages: RecordMessage[] = [];
  const emit = (kind: MessageKind, rev: string, extra: Partial<RecordMessage> = {}) => {
    if (!policy.kinds.has(kind) && !(kind === 'resolved' && policy.kinds.has('healthy'))) return;
    next.seq += 1;
    messages.push({
      id: `${ps.uid}/${rev}#${next.seq}`,
      kind,
      namespace: ps.namespace,
      name: ps.name,
      uid: ps.uid,
      revision: rev,
      at,
      ...extra,
    });
  };
  const details = {
    ...(view.reason ? { reason: view.reason } : {}),
    ...(view.message ? { message: view.message } : {}),
    ...(view.cause ? { cause: view.cause } : {}),
    ...(view.counts ? { counts: view.counts } : {}),
  };

  if (!mem || revision !== mem.revision) {
    if (mem && mem.phase !== 'healthy' && mem.phase !== 'superseded') {
      emit('superseded', mem.revision, { supersededBy: revision });
    }
    next.revision = revision;
    delete next.reason;
    delete next.quieted;
    delete next.wasHealthy;
  } else if (!moves(mem.phase, view.phase, mem.reason, view.reason)) {
    return { memory: next, messages: [] };
  }
  next.phase = view.phase;
  if (view.phase === 'failed') {
    next.reason = view.reason;
    const key = view.reason ?? '';
    const last = next.alerts?.[key];
    const quiet = !policy.mirrorsState && last !== undefined && now - last < policy.quietPeriodMs;
    if (quiet) next.quieted = true;
    else {
      const before = messages.length;
      emit('failed', revision, details);
      if (messages.length > before) {
        next.alerts = { ...pruneAlerts(next.alerts, now, policy.quietPeriodMs), [key]: now };
        next.alertOpen = true;
      }
    }
    return { memory: next, messages };
  }
  const quieted = next.quieted;
  delete next.reason;
  delete next.quieted;
  if (view.phase === 'healthy' && next.alertOpen) {
    next.alertOpen = false;
    emit('resolved', revision, details);
  } else if (!(view.phase === 'healthy' && quieted && next.wasHealthy)) {
    // a flap (healthy, a failure held back by the quiet period, healthy again) is left unsaid
    emit(view.phase, revision, details);
  }
  if (view.phase === 'healthy') next.wasHealthy = true;
  return { memory: next, messages };
}

/** True when Ready turned True at or after `since` (epoch ms; both have a second's resolution). */
function becameReadySince(status: Status | undefined, since: number | undefined): boolean {
  const at = Date.parse(conditionOf(status, 'Ready')?.lastTransitionTime ?? '');
  return since !== undefined && Number.isFinite(at) && at >= Math.floor(since / 1000) * 1000;
}

/** Within one revision: forward through started → applied → healthy, into failed (again, with a new reason), out of failed only by Ready. */
function moves(from: Phase, to: Exclude<Phase, 'superseded'>, fromReason?: string, toReason?: string): boolean {
  if (from === to) return to === 'failed' && fromReason !== toReason;
  if (to === 'failed') return true;
  if (from === 'failed') return to === 'healthy';
  return ORDER[to] > ORDER[from];
}

/** Keeps only the quiet-period entries still in force, so the memory stays small. */
function pruneAlerts(alerts: Record<string, number> | undefined, now: number, quietMs: number): Record<string, number> {
  return Object.fromEntries(Object.entries(alerts ?? {}).filter(([, t]) => now - t < quietMs));
}
