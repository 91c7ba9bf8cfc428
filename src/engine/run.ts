/**
 * One reconcile's context, made at the top of `reconcile()`: the PackageSync as last read or written, the
 * identity the run acts as, what the run has learnt (revision, digest, changes, health), and the only way
 * status is written. Every outcome goes through `report()`: the pure reducer (src/core/status.ts) turns it
 * into conditions, a write that would change nothing is skipped, and a run that was aborted (shutdown, lost
 * leadership) writes nothing, so the next leader starts from the last durable status.
 *
 * The act and health steps report progress to it (ActProgress, HealthProgress) instead of calling back up.
 */
import type { Logger } from 'pino';
import { RECONCILE_REQUESTED_AT, type HistoryEntry, type PackageSync, type Status } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import { interruptionMessage } from '../adapters/kube/failures.ts';
import type { Failure } from '../core/failure.ts';
import type { CauseLink, HealthSummary } from '../core/health/index.ts';
import type { InventoryEntry } from '../core/inventory.ts';
import { describeRef, refKey, type ObjectRef } from '../core/object.ts';
import { summarizeChanges, type Change } from '../core/plan/changeset.ts';
import { correctedMessage, detectedMessage, driftReport, sameDrift, type Drift } from '../core/plan/drift-report.ts';
import { duplicateKeysMessage } from '../core/render/render.ts';
import type { DuplicateKeyNote } from '../core/render/types.ts';
import { requeueOf, type Ending, type Requeue, type Timing } from '../core/exit.ts';
import { conditionOf, reduceStatus, sameStatus, type Outcome } from '../core/status.ts';
import type { ActProgress } from './act.ts';
import type { HealthProgress } from './health-step.ts';
import type { Objects, PackageObjects, Ports } from './ports.ts';

/** When to run again (undefined: only on the next change), and whether to back off: core/exit.ts decides. */
export type ReconcileResult = Requeue;

/** How many reconciles status.history keeps, newest first. */
const HISTORY = 5;

/** A run bound to its cluster and identity (`Run.actAs`): every later step reads and writes through `objects`. */
export type BoundRun = Run & { readonly objects: PackageObjects };

/** A bound run whose revision is known (`BoundRun.resolved`): what it applies, waits for and reports names it. */
export type ResolvedRun = BoundRun & { readonly revision: string };

/** When a reconcile that threw (an API fault) runs again: the manager's answer, from the same table. */
export const interruptedRequeue = (): ReconcileResult => requeueOf({ kind: 'interrupted' }, undefined);

export class Run implements ActProgress, HealthProgress {
  /** The PackageSync as this run loaded it: what "before" means for events and the no-op check. */
  readonly loaded: PackageSync;
  readonly ports: Ports;
  readonly signal: AbortSignal;
  readonly started = new Date();
  /** The reconcile-requested-at annotation, when it asks for a run not yet handled. */
  readonly trigger: string | undefined;
  /** The package's objects as the run's identity: bound once the spec is known (`actAs` returns a BoundRun). */
  objects: PackageObjects | undefined;
  log: Logger;
  revision: string | undefined;
  digest: string | undefined;
  /** Objects handled so far: created / configured / unchanged / pruned. */
  readonly changes: Change[] = [];
  /** Set when an apply failed: nothing was pruned, and there is nothing to announce. */
  applyFailures: readonly Failure[] = [];
  /** The latest health of the package's objects: written to status.objects with the outcome. */
  private health: HealthSummary | undefined;
  /** The chain from the first object not Current to its cause, as the health wait last saw it. */
  private cause: readonly CauseLink[] = [];
  private status: Status;
  private latest: PackageSync;
  /** spec.interval and retryInterval, once the spec was read and found valid (core/exit.ts). */
  private timing: Timing | undefined;
  /**
   * The Applied event, sent without waiting for its answer: the worker goes on to the health wait (and gives
   * its slot back, ADR 0030) one round trip sooner. The next status write waits for it, so the event still comes
   * before the status after it, and a fault in sending it ends the run there as it did here.
   */
  private announcing: Promise<void> = Promise.resolve();

  constructor(ps: PackageSync, ports: Ports, signal: AbortSignal) {
    this.loaded = ps;
    this.latest = ps;
    this.ports = ports;
    this.log = ports.log;
    this.signal = signal;
    const trigger = ps.metadata.annotations?.[RECONCILE_REQUESTED_AT];
    this.trigger = trigger !== undefined && trigger !== ps.status?.lastHandledReconcileAt ? trigger : undefined;
    // a requested reconcile is answered by whatever this run writes, so `packagesync reconcile` sees it
    this.status = this.trigger ? { ...ps.status, lastHandledReconcileAt: this.trigger } : (ps.status ?? {});
  }

  get owner(): { name: string; namespace: string } {
    return { name: this.loaded.metadata.name, namespace: this.loaded.metadata.namespace };
  }

  /**
   * Binds the run to its cluster (engine/target-cluster.ts) and identity once: every read and write of package
   * objects goes through this view.
   */
  actAs(serviceAccount: string | undefined, cluster: Objects = this.ports.objects): BoundRun {
    this.objects = cluster.forPackage(this.owner, serviceAccount);
    return this as BoundRun;
  }

  /** The spec was read and found valid: its interval and retryInterval time every ending from here (core/exit.ts). */
  timed(timing: Timing): void {
    this.timing = timing;
  }

  /** When a run that ended so runs again: the one table of delays (core/exit.ts). */
  requeue(ending: Ending): ReconcileResult {
    return requeueOf(ending, this.timing);
  }

  /**
   * The revision is known (the Inputs step says so as soon as it is, so a failure after it names it). Told the
   * same revision again, the same run: its log is not bound twice.
   */
  resolved(this: BoundRun, revision: string): ResolvedRun {
    if (this.revision !== revision) {
      this.revision = revision;
      this.log = this.log.child({ revision });
    }
    return this as ResolvedRun;
  }

  // ActProgress

  async saveInventory(this: ResolvedRun, entries: InventoryEntry[], phase: 'applying' | 'pruned'): Promise<void> {
    this.status = { ...this.status, inventory: { entries } };
    // the shrunk inventory goes out with the next status write (waiting, succeeded or failed)
    if (phase === 'applying') {
      await this.report({
        kind: 'progressing',
        revision: this.revision,
        message: `Applying revision ${this.revision}`,
      });
    }
  }

  handled(changes: readonly Change[]): void {
    this.changes.push(...changes);
  }

  applyFailed(failures: readonly Failure[]): void {
    this.applyFailures = failures;
  }

  // HealthProgress

  waiting(this: ResolvedRun, message: string): Promise<void> {
    return this.report({ kind: 'waiting', revision: this.revision, message });
  }

  observed(h: HealthSummary, cause: readonly CauseLink[]): void {
    // Kept aside, not put in status yet: a progress write in flight returns the status it sent, which would
    // undo a count put there meanwhile. The outcome's write carries the last counts (and, when the health
    // check failed, the cause).
    this.health = h;
    this.cause = cause;
  }

  /** `created 2, configured 1, pruned 1`-style summary of what this run changed. */
  summary(): string {
    return summarizeChanges(this.changes);
  }

  /**
   * Metrics, a log line and an Applied event for what the apply and prune changed (none after a failed apply);
   * the event goes out while the run goes on (`announcing`).
   */
  announceChanges(): void {
    const { namespace, name, uid } = this.loaded.metadata;
    if (this.revision) this.ports.observe?.changes?.({ namespace, name, uid: uid ?? '' }, this.revision, this.changes);
    const count = (f: (c: Change) => boolean) => this.changes.filter(f).length;
    const applied = count((c) => c.action !== 'unchanged' && c.action !== 'pruned');
    this.ports.observe?.applied?.(applied);
    if (this.applyFailures.length > 0) return;
    this.ports.observe?.pruned?.(count((c) => c.action === 'pruned'));
    if (this.changes.some((c) => c.action !== 'unchanged')) {
      this.log.info({ changes: this.summary() }, 'applied');
      const sent = this.event('Normal', 'Applied', `Revision ${this.revision}: ${this.summary()}`);
      // handled now (no unhandled rejection while nobody waits); its failure is thrown where it is awaited
      sent.catch(() => undefined);
      this.announcing = sent;
    }
  }

  /** Protected kinds that left the package: left in the cluster and no longer ours; say so once. */
  async released(refs: readonly ObjectRef[]): Promise<void> {
    if (refs.length === 0) return;
    const named =
      refs.slice(0, 10).map(describeRef).join(', ') + (refs.length > 10 ? `, and ${refs.length - 10} more` : '');
    this.log.info({ released: refs.length }, 'protected objects left the package: left in the cluster');
    await this.event(
      'Normal',
      'Released',
      `left in the cluster and released from the inventory (set spec.pruneProtectedKinds: true to delete them): ${named}`,
    );
  }

  /**
   * Keys a render tool wrote twice (docs/adr/0034): the last value is applied, and a Warning event says so once,
   * on the first attempt of a revision and generation (a retry or a resync of the same says nothing new).
   */
  async duplicateKeysSeen(notes: readonly DuplicateKeyNote[] | undefined): Promise<void> {
    if (!notes || notes.length === 0) return;
    const status = this.loaded.status;
    const generation = this.loaded.metadata.generation;
    if (status?.lastAttemptedRevision === this.revision && status?.observedGeneration === generation) return;
    this.log.info({ duplicateKeys: notes.length }, 'render output repeats keys: the last value is applied');
    await this.event('Warning', Reason.DuplicateKeys, duplicateKeysMessage(notes));
  }

  // Drift (docs/drift.md, docs/adr/0022)

  /**
   * What the plan found drifted. Detect: status.drift lists it (written with the outcome), and a Warning event
   * says so when the list changed. Correct: a list left from Detect goes. True when status.drift changes.
   */
  async driftSeen(drifts: readonly Drift[], policy: 'Correct' | 'Detect'): Promise<boolean> {
    const report = policy === 'Detect' ? driftReport(drifts, new Date().toISOString()) : undefined;
    const before = this.loaded.status?.drift;
    const { drift: _old, ...rest } = this.status;
    this.status = report ? { ...rest, drift: report } : rest;
    if (sameDrift(before, report)) return false;
    if (report) {
      this.log.info({ drifted: report.total }, 'drift detected; driftPolicy Detect: nothing changed');
      await this.event('Warning', Reason.DriftDetected, detectedMessage(report));
    }
    return true;
  }

  /** Only status.drift changed (Detect, nothing else to do): the same Ready, with the new list. */
  async driftReported(this: ResolvedRun): Promise<ReconcileResult> {
    const message = conditionOf(this.loaded.status, 'Ready')?.message ?? `Applied revision ${this.revision}`;
    await this.report({ kind: 'succeeded', revision: this.revision, message });
    return this.requeue({ kind: 'succeeded' });
  }

  /** Correct: drifted objects were applied again. A metric, status.lastDriftCorrection and an event name them. */
  async driftCorrected(drifts: readonly Drift[], takenBack: ReadonlyMap<string, string[]>): Promise<void> {
    if (drifts.length === 0) return;
    const named = drifts.map((d) => ({ ...d, managers: takenBack.get(refKey(d.ref)) ?? [] }));
    const report = driftReport(named, new Date().toISOString())!;
    this.ports.observe?.driftCorrected?.(drifts.length);
    this.status = { ...this.status, lastDriftCorrection: report };
    this.log.info({ corrected: drifts.length }, 'drift corrected');
    await this.event('Normal', Reason.DriftCorrected, correctedMessage(report));
  }

  // Outcomes: each writes status once and says when to run again.

  async succeeded(this: ResolvedRun, message: string): Promise<ReconcileResult> {
    this.addObjectCounts();
    this.addHistory(this.revision, 'Succeeded');
    await this.report({ kind: 'succeeded', revision: this.revision, message });
    return this.requeue({ kind: 'succeeded' });
  }

  /** Found settled, or unchanged since it was (ADR 0031): nothing to write, the next check after spec.interval. */
  settled(): ReconcileResult {
    return this.requeue({ kind: 'succeeded' });
  }

  /**
   * A failed step: history, a Warning event (a retry of the same failure counts up the same event), status;
   * back off.
   */
  async failed(failure: Failure): Promise<ReconcileResult> {
    this.addObjectCounts();
    if (this.revision) this.addHistory(this.revision, failure.reason);
    this.log.info({ reason: failure.reason }, failure.message);
    await this.event('Warning', failure.reason, failure.message);
    await this.report({
      kind: 'failed',
      failure,
      ...(this.revision ? { revision: this.revision } : {}),
      // a best-effort apply's every failure (status.failures); `failure` sums them up
      ...(this.applyFailures.length > 0 ? { failures: this.applyFailures } : {}),
      // a failed health check's chain to its first cause (status.cause)
      ...(failure.reason === Reason.HealthCheckFailed && this.cause.length > 0 ? { cause: this.cause } : {}),
    });
    return this.requeue({ kind: 'failed', failure });
  }

  /**
   * An outcome decided before any work (a spec the schema refuses, suspended, a dependency not Ready), with its
   * event.
   */
  async decided(outcome: Extract<Outcome, { kind: 'failed' | 'suspended' | 'dependency-not-ready' }>) {
    if (outcome.kind === 'failed') await this.event('Warning', outcome.failure.reason, outcome.failure.message);
    if (outcome.kind === 'dependency-not-ready') await this.event('Normal', Reason.DependencyNotReady, outcome.message);
    await this.report(outcome);
    if (outcome.kind === 'failed') return this.requeue({ kind: 'failed', failure: outcome.failure });
    return this.requeue(outcome.kind === 'suspended' ? { kind: 'done' } : outcome);
  }

  /**
   * A newer revision made the health wait moot: no failure to record. A new generation or the trigger annotation
   * (the manager's `superseded`) and shutdown are the manager's to re-run; a new commit on the ref starts over.
   */
  superseded(byManager: boolean): ReconcileResult {
    return this.requeue({ kind: 'superseded', byManager });
  }

  /**
   * A teardown (finalize.ts) that failed: said in a Warning event and a log line, the finalizer stays and it is
   * tried again soon. A deleting PackageSync's status is left as it was.
   */
  async teardownFailed(failure: Failure, detail = ''): Promise<ReconcileResult> {
    this.log.info({ reason: failure.reason }, `${failure.message}${detail}`);
    await this.event('Warning', failure.reason, `${failure.message}${detail}`);
    return this.requeue({ kind: 'teardown-failed', failure });
  }

  /** Torn down, or nothing (left) to do: only the next change of the PackageSync runs it again. */
  done(): ReconcileResult {
    return this.requeue({ kind: 'done' });
  }

  /** A teardown's news (Pruned, Released, TerminationTimeout): events only, a deleting PackageSync's status stays. */
  async told(type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    await this.event(type, reason, message);
  }

  /**
   * An API fault mid-reconcile (e.g. the API server restarting): say so if the API lets us, keeping the
   * inventory as it was saved last (old ∪ new once applying started). The status names the kind of fault,
   * never the raw error text. The manager then requeues it (`interruptedRequeue`).
   */
  async interrupted(e: unknown): Promise<void> {
    const message = `reconcile interrupted: ${interruptionMessage(e)}; retrying`;
    await this.event('Warning', Reason.InternalError, message);
    await this.report({ kind: 'failed', failure: { reason: Reason.InternalError, message, terminal: false } });
  }

  /** Events are best effort and never sent for a run that was aborted (it says nothing about the package). */
  private async event(type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    if (this.signal.aborted) return;
    await this.ports.packageSyncs.event(this.loaded, type, reason, message);
  }

  /** The only status write of a reconcile. */
  private async report(outcome: Outcome): Promise<void> {
    // Shutdown or lost leadership aborted this run: another replica may own the PackageSync by now, and a
    // step cut short says nothing about the package. Status stays as the last write left it (Reconciling,
    // inventory old ∪ new), which is what the next leader starts from.
    if (this.signal.aborted) return;
    await this.announcing;
    const next = reduceStatus(this.status, this.loaded.metadata.generation ?? 0, outcome, new Date().toISOString());
    if (sameStatus(this.latest.status, next)) {
      this.status = next;
      return;
    }
    const written = await this.ports.packageSyncs.writeStatus(this.latest, next);
    // a conflict may have added another writer's inventory entries (core/status-rebase.ts): keep them
    this.status = written?.status ?? next;
    if (written) this.latest = written;
  }

  private addObjectCounts(): void {
    const h = this.health;
    if (!h) return;
    const c = h.counts;
    this.status = {
      ...this.status,
      objects: {
        total: h.total,
        current: c.Current,
        inProgress: c.InProgress,
        failed: c.Failed,
        terminating: c.Terminating,
        unknown: c.Unknown + c.NotFound,
      },
    };
  }

  private addHistory(revision: string, result: string): void {
    const count = (a: Change['action']) => this.changes.filter((c) => c.action === a).length;
    const entry: HistoryEntry = {
      revision,
      result,
      startedAt: this.started.toISOString(),
      durationSeconds: Math.round((Date.now() - this.started.getTime()) / 10) / 100,
      created: count('created'),
      configured: count('configured'),
      pruned: count('pruned'),
      digest: this.digest ? `sha256:${this.digest}` : '',
    };
    this.status = { ...this.status, history: [entry, ...(this.status.history ?? [])].slice(0, HISTORY) };
  }
}
