/**
 * The manager: watches PackageSyncs, feeds the work queue, runs reconciles. Spec changes (a new
 * generation), the trigger annotation and deletion start work at once; our own status writes do not.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { durationMs, PRUNE_APPROVED, RECONCILE_REQUESTED_AT, type PackageSync } from '../api/packagesync.ts';
import { Informer } from '../adapters/kube/informer.ts';
import { packageSyncCollectionPath } from '../adapters/kube/packagesyncs.ts';
import type { KubeClient } from '../adapters/kube/client.ts';
import type { KubeObject } from '../core/object.ts';
import { conditionOf } from '../core/status.ts';
import { reconcile, type ControllerSettings } from '../engine/reconcile.ts';
import { interruptedRequeue } from '../engine/run.ts';
import type { Ports } from '../engine/ports.ts';
import { WorkQueue } from './work-queue.ts';
import { ConfigWatch } from './config-watch.ts';
import type { NamespacePolicy } from '../core/plan/namespace-policy.ts';
import { errorText } from '../core/failure.ts';
import { deferredChild } from '../config/logger.ts';

export interface ManagerOptions {
  watchNamespace?: string;
  labelSelector?: string;
  concurrency: number;
  /** --interval-jitter-percentage */
  intervalJitterPercent?: number;
  applyConcurrency: number;
  defaultServiceAccount?: string;
  namespacePolicy: NamespacePolicy;
  /** --no-cross-namespace-refs */
  noCrossNamespaceRefs?: boolean;
  /** postBuild: fail on an undefined variable (--strict-substitutions, default true). */
  strictSubstitutions?: boolean;
  /** Reconcile when a referenced ConfigMap or Secret changes (default true; --no-watch-configs). */
  watchConfigs?: boolean;
  /** --watch-configs-label-selector */
  watchConfigsLabelSelector?: string;
  onQueueDepth?: (queued: number, inFlight: number) => void;
  onReconciled?: (ps: { namespace: string; name: string }, seconds: number, failed: boolean) => void;
  /** The watchdog (ADR 0032): a reconcile past spec.timeout + this margin is overdue (default 60 s). */
  overdueMarginMs?: number;
  /** A reconcile became overdue (`overdue`: how many are now), or an overdue one ended. */
  onOverdue?: (key: string, overdue: number, budgetMs: number) => void;
  onOverdueEnded?: (key: string, overdue: number, ranMs: number) => void;
}

/**
 * Beyond spec.timeout, what a reconcile may still spend before the watchdog calls it overdue: the steps before
 * the deadline starts (load, finalizer) and the final status write, each one request (30 s at most).
 */
const OVERDUE_MARGIN_MS = 60_000;
const DEFAULT_TIMEOUT_MS = 3 * 60_000;

export class Manager {
  readonly informer: Informer;
  readonly queue: WorkQueue;
  /** Referenced ConfigMaps and Secrets (docs/deploy.md); undefined with --no-watch-configs. */
  readonly configWatch: ConfigWatch | undefined;
  private readonly ports: Ports;
  private readonly log: Logger;
  private readonly opts: ManagerOptions;
  /** What every reconcile is given of the controller's flags. */
  private readonly settings: ControllerSettings;
  /** Each PackageSync's reconcile-requested-at value and when this controller's watch first showed it. */
  private readonly requestsSeen = new Map<string, { value: string; at: number }>();

  constructor(client: KubeClient, ports: Ports, opts: ManagerOptions) {
    this.ports = ports;
    this.log = ports.log;
    this.opts = opts;
    this.settings = {
      applyConcurrency: opts.applyConcurrency,
      defaultServiceAccount: opts.defaultServiceAccount,
      namespacePolicy: opts.namespacePolicy,
      strictSubstitutions: opts.strictSubstitutions,
      noCrossNamespaceRefs: opts.noCrossNamespaceRefs,
    };
    this.informer = new Informer(client, {
      path: packageSyncCollectionPath(opts.watchNamespace),
      labelSelector: opts.labelSelector,
      onError: (e) => this.log.warn({ err: errorText(e) }, 'PackageSync watch interrupted; resuming'),
    });
    this.queue = new WorkQueue(
      (key, signal, superseded, onlyWaiting) => this.reconcileKey(key, signal, superseded, onlyWaiting),
      {
        concurrency: opts.concurrency,
        intervalJitterPercent: opts.intervalJitterPercent,
        onDepthChange: opts.onQueueDepth,
        budgetMs: (key) => this.budgetOf(key),
        onOverdue: (key, budgetMs) => opts.onOverdue?.(key, this.queue.overdue.length, budgetMs),
        onOverdueEnded: (key, ranMs) => opts.onOverdueEnded?.(key, this.queue.overdue.length, ranMs),
      },
    );
    this.configWatch =
      opts.watchConfigs === false
        ? undefined
        : new ConfigWatch(client, {
            namespace: opts.watchNamespace,
            labelSelector: opts.watchConfigsLabelSelector,
            log: this.log,
            onChange: (key, changed) => {
              this.log.debug({ changed, packageSync: key }, 'a referenced object changed: reconciling');
              this.queue.supersede(key);
            },
          });
    this.informer.on((event, obj, old) => {
      this.configWatch?.track(event, obj as unknown as PackageSync);
      this.onEvent(event, obj as unknown as PackageSync, old as unknown as PackageSync | undefined);
    });
  }

  start(): void {
    this.informer.start();
    void this.configWatch?.start();
  }

  /** Ends within `graceMs`: runs are aborted before its end, and abandoned at its end if they ignore it. */
  async stop(graceMs: number): Promise<void> {
    this.informer.stop();
    this.configWatch?.stop();
    const abandon = Math.min(2_000, graceMs / 4);
    await this.queue.shutdown(graceMs - abandon, abandon);
  }

  /** spec.timeout of the PackageSync as the watch has it, plus the margin (an unreadable timeout: the default). */
  private budgetOf(key: string): number {
    const [namespace, name] = key.split('/') as [string, string];
    const timeout = (this.informer.get(namespace, name) as unknown as PackageSync | undefined)?.spec?.timeout;
    let ms = DEFAULT_TIMEOUT_MS;
    try {
      if (typeof timeout === 'string') ms = durationMs(timeout);
    } catch {
      // an invalid spec fails in parseSpec, in milliseconds
    }
    return ms + (this.opts.overdueMarginMs ?? OVERDUE_MARGIN_MS);
  }

  private onEvent(event: 'add' | 'update' | 'delete', ps: PackageSync, old?: PackageSync): void {
    const key = keyOf(ps);
    if (event === 'delete') {
      this.requestsSeen.delete(key);
      this.queue.forget(key);
      return;
    }
    // when a request arrived, by this controller's clock (the annotation's own time is the requester's)
    const requested = ps.metadata.annotations?.[RECONCILE_REQUESTED_AT];
    if (requested === undefined) this.requestsSeen.delete(key);
    else if (this.requestsSeen.get(key)?.value !== requested)
      this.requestsSeen.set(key, { value: requested, at: Date.now() });
    if (event === 'add') this.queue.add(key);
    // a new revision: a reconcile still waiting for the old one's health stops and starts over
    else if (needsWork(ps, old)) this.queue.supersede(key);
    if (event === 'update' && becameReady(ps, old)) this.wakeDependents(ps);
  }

  /** A PackageSync turned Ready: whatever dependsOn it need not wait for its retry timer. */
  private wakeDependents(ready: PackageSync): void {
    for (const obj of this.informer.cache.values()) {
      const ps = obj as unknown as PackageSync;
      const deps = (ps.spec?.dependsOn ?? []) as { name: string; namespace?: string }[];
      if (
        deps.some(
          (d) => d.name === ready.metadata.name && (d.namespace ?? ps.metadata.namespace) === ready.metadata.namespace,
        )
      ) {
        this.queue.add(keyOf(ps));
      }
    }
  }

  private async reconcileKey(key: string, signal: AbortSignal, superseded?: AbortSignal, onlyWaiting?: () => void) {
    const [namespace, name] = key.split('/') as [string, string];
    const started = performance.now();
    // One child logger per reconcile: every line says which PackageSync, and reconcileID ties together the
    // lines of one run when several interleave. The engine adds the revision once it is known. Made only when
    // the reconcile logs something (a settled package's periodic check usually does not).
    const log = deferredChild(this.log, () => ({ namespace, name, reconcileID: randomBytes(4).toString('hex') }));
    try {
      const requestSeen = this.requestsSeen.get(key);
      const context = { signal, superseded, onlyWaiting, ...(requestSeen ? { requestSeen } : {}) };
      const res = await reconcile(namespace, name, { ...this.ports, log }, this.settings, context);
      if (signal.aborted) return abandoned(log);
      const seconds = (performance.now() - started) / 1000;
      this.opts.onReconciled?.({ namespace, name }, seconds, res.failed);
      log.debug({ seconds, failed: res.failed, requeueAfterMs: res.requeueAfterMs }, 'reconciled');
      return res;
    } catch (e) {
      if (signal.aborted) return abandoned(log);
      // An API fault mid-reconcile (e.g. the API server restarted): retried with back-off (core/exit.ts).
      log.warn({ err: errorText(e) }, 'reconcile failed unexpectedly; retrying');
      this.opts.onReconciled?.({ namespace, name }, (performance.now() - started) / 1000, true);
      return interruptedRequeue();
    }
  }
}

/** Shutdown or lost leadership cut a reconcile short: not a failure of the package, nothing to retry here. */
function abandoned(log: Logger) {
  log.info('reconcile abandoned (shutdown or leadership lost); the next leader takes it up');
  return { failed: false };
}

const keyOf = (ps: PackageSync) => `${ps.metadata.namespace}/${ps.metadata.name}`;

function needsWork(ps: PackageSync, old?: PackageSync): boolean {
  if (!old) return true;
  if (ps.metadata.generation !== old.metadata.generation) return true;
  if (ps.metadata.deletionTimestamp && !old.metadata.deletionTimestamp) return true;
  // a requested reconcile, or a prune approved: both mean "now"
  return [RECONCILE_REQUESTED_AT, PRUNE_APPROVED].some((key) => {
    const a = ps.metadata.annotations?.[key];
    return a !== undefined && a !== old.metadata.annotations?.[key];
  });
}

function becameReady(ps: PackageSync, old?: PackageSync): boolean {
  return conditionOf(ps.status, 'Ready')?.status === 'True' && conditionOf(old?.status, 'Ready')?.status !== 'True';
}

export type { KubeObject };
