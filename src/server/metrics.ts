/**
 * The controller's Prometheus metrics, on a registry of its own (not prom-client's global one, so tests
 * and a second controller in one process do not collide). The object returned by `createMetrics` is the
 * only thing the controller touches; its methods match the hooks the controller already exposes
 * (KubeClientOptions.onRequest, ManagerOptions.onQueueDepth / onReconciled, Ports.observe).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PackageSync } from '../api/packagesync.ts';
import type { SourcePort } from '../engine/ports.ts';
import {
  CONDITION_METRIC,
  CONDITION_STATUSES,
  CONDITION_TYPES,
  DRIFTED_METRIC,
  PackageSyncSeries,
  type ConditionStatus,
} from './package-sync-series.ts';
import { notifyMetrics, type NotifyMetrics } from './notify-metrics.ts';

/** What the renderer counts (adapters/render/build.ts RenderStats). */
interface RendererStats {
  toolRuns: number;
  toolSeconds: number;
  cacheHits: number;
  workersReplaced?: number;
}

export { CONDITION_TYPES };

export interface ControllerMetrics {
  readonly registry: Registry;
  /** Same shape as ManagerOptions.onReconciled. */
  observeReconcile(ps: { namespace: string; name: string }, seconds: number, failed: boolean): void;
  /** Same shape as ManagerOptions.onQueueDepth. */
  setQueue(queued: number, inFlight: number): void;
  /** The watchdog (ADR 0032): reconciles past their deadline still running now; `became` when one just did. */
  setOverdue(overdue: number, became: boolean): void;
  /** Same shape as KubeClientOptions.onRequest; status 0 = no answer (timeout, connection error). */
  onApiRequest(verb: string, status: number, seconds: number, resource?: string): void;
  /** Plug into Ports.observe. */
  readonly objects: {
    applied(n: number): void;
    pruned(n: number): void;
    driftCorrected(n: number): void;
    unchangedCheck(stopped: 'before-load' | 'before-render'): void;
    healthRound(): void;
  };
  observeGitFetch(seconds: number): void;
  /** A PackageSync queued by the drift watch (controller/drift-watch.ts). */
  driftCheck(): void;
  /** Exposes a renderer's counters: tool runs and render-cache hits (a no-op resync adds only hits). */
  observeRenderer(stats: () => RendererStats): void;
  /** What the kernel enforces on render subprocesses (adapters/render/sandbox.ts), once at start-up. */
  observeSandbox(probe: { landlock: string; abi: number }): void;
  /** Live reads answered by the shared watches vs left to the API server (adapters/kube/live-cache.ts). */
  observeLiveCache(stats: () => { hits: number; misses: number }): void;
  /** Wraps a SourcePort so every fetch is timed, without the git adapter knowing about metrics. */
  instrumentSource(source: SourcePort): SourcePort;
  /** Mirrors a PackageSync's Ready/Reconciling/Stalled conditions (call on every watch add/update). */
  setConditions(ps: Pick<PackageSync, 'metadata' | 'status'>): void;
  /** Deployment records (docs/adr/0040): delivery results, and the outboxes' depth and oldest age at scrape time. */
  readonly notifications: NotifyMetrics & {
    observe(stats: () => { depth: number; oldestSeconds: number }): void;
  };
  /** Drops a deleted PackageSync's condition series, so dashboards do not show ghosts. */
  forget(namespace: string, name: string): void;
  /** The exposition text and its content type, for GET /metrics. */
  render(): Promise<{ contentType: string; body: string }>;
}

export function createMetrics(opts: { processMetrics?: boolean } = {}): ControllerMetrics {
  const registry = new Registry();
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const reconcileDuration = new Histogram({
    name: 'packagesync_reconcile_duration_seconds',
    help: 'Time one reconcile of one PackageSync took, from load to status write.',
    // A reconcile spans a git fetch and a health wait (spec.timeout, default 3m): seconds to minutes.
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers,
  });
  // No name/namespace labels on the reconcile counter and histogram: per-object histograms cost
  // buckets × PackageSyncs series. Per-object state lives in packagesync_condition.
  const reconciles = new Counter({
    name: 'packagesync_reconcile_total',
    help: 'Reconciles finished, by result.',
    labelNames: ['result'] as const,
    registers,
  });
  const queueDepth = new Gauge({
    name: 'packagesync_queue_depth',
    help: 'PackageSyncs due for a reconcile and waiting for a free worker.',
    registers,
  });
  const inFlight = new Gauge({
    name: 'packagesync_reconciles_in_flight',
    help: 'Reconciles running now.',
    registers,
  });
  const applied = new Counter({
    name: 'packagesync_objects_applied_total',
    help: 'Objects created or changed by server-side apply (unchanged objects are not counted).',
    registers,
  });
  const pruned = new Counter({
    name: 'packagesync_objects_pruned_total',
    help: 'Objects deleted because they left their package.',
    registers,
  });
  const driftCorrected = new Counter({
    name: 'packagesync_drift_corrected_objects_total',
    help:
      'Objects re-applied at a revision already applied to them, because their live copy had drifted from the ' +
      'package (someone deleted them, or changed a field the package sets: driftPolicy Correct takes it back).',
    registers,
  });
  const unchangedChecks = new Counter({
    name: 'packagesync_unchanged_checks_total',
    help:
      'Periodic checks that found nothing changed since their package was last found settled (same revision, ' +
      'spec, variables and live objects) and so skipped render and plan (docs/adr/0031); stopped: before-load ' +
      '(PackageSync, ref, variables and live objects compared before the PackageSync was loaded) or before-render.',
    labelNames: ['stopped'] as const,
    registers,
  });
  const healthRounds = new Counter({
    name: 'packagesync_health_rounds_total',
    help:
      "Rounds of health waits: each reads a waiting PackageSync's objects (and the ReplicaSets and Pods of its " +
      'workloads not Current) and judges them. A wait has one round, then one per watch event of its own objects ' +
      'or their children, or per 30 s recheck (LIST polling, for an impersonating PackageSync: one per poll).',
    registers,
  });
  const driftChecks = new Counter({
    name: 'packagesync_drift_checks_total',
    help: 'PackageSyncs queued because someone else changed one of their objects (watch events; see docs/drift.md).',
    registers,
  });
  // per-PackageSync series are formatted once per status change, not per scrape (package-sync-series.ts); the
  // gauges stay registered, without values, so that the registry lists them
  const perPackageSync = new PackageSyncSeries();
  new Gauge({
    name: DRIFTED_METRIC,
    help: 'Objects of a PackageSync that differ from its package in the cluster now (driftPolicy Detect; status.drift).',
    labelNames: ['name', 'namespace'] as const,
    registers,
  });
  const gitFetch = new Histogram({
    name: 'packagesync_git_fetch_duration_seconds',
    help: 'Time to resolve a ref and fetch a revision (cache hits included).',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers,
  });
  const apiRequests = new Counter({
    name: 'packagesync_api_requests_total',
    help: 'Requests to the Kubernetes API server, by verb, HTTP status (0 = no answer) and plural resource ("" = discovery and other non-resource paths).',
    labelNames: ['verb', 'code', 'resource'] as const,
    registers,
  });
  const apiDuration = new Histogram({
    name: 'packagesync_api_request_duration_seconds',
    help: 'Kubernetes API request latency until the response headers (for WATCH: until the stream opened).',
    labelNames: ['verb'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  new Gauge({
    name: CONDITION_METRIC,
    help: 'A PackageSync condition: 1 for its current status, 0 for the others (one series per status, as Flux does).',
    labelNames: ['name', 'namespace', 'type', 'status'] as const,
    registers,
  });

  let renderStats: () => RendererStats = () => ({
    toolRuns: 0,
    toolSeconds: 0,
    cacheHits: 0,
  });
  new Counter({
    name: 'packagesync_render_tool_runs_total',
    help: 'kustomize builds and helm templates run, by subprocess or render worker (a render-cache hit runs none).',
    registers,
    collect() {
      this.reset();
      this.inc(renderStats().toolRuns);
    },
  });
  new Counter({
    name: 'packagesync_render_tool_seconds_total',
    help: 'Seconds spent running kustomize build and helm template (divide by the runs for the time per render).',
    registers,
    collect() {
      this.reset();
      this.inc(renderStats().toolSeconds);
    },
  });
  new Counter({
    name: 'packagesync_render_cache_hits_total',
    help: 'kustomize and helm renders served from the render cache (same commit, path and inputs).',
    registers,
    collect() {
      this.reset();
      this.inc(renderStats().cacheHits);
    },
  });

  new Counter({
    name: 'packagesync_render_workers_replaced_total',
    help: 'Render workers killed and replaced after a render ran past its time, panicked or crashed (--render-engine=worker).',
    registers,
    collect() {
      this.reset();
      this.inc(renderStats().workersReplaced ?? 0);
    },
  });

  const sandbox = new Gauge({
    name: 'packagesync_render_sandbox',
    help: 'What the kernel enforces on render subprocesses: 1 for the Landlock state found at start-up (enforced: files and TCP; partial: files only; unavailable; missing: no launcher) and its ABI.',
    labelNames: ['landlock', 'abi'] as const,
    registers,
  });

  let liveStats: () => { hits: number; misses: number } = () => ({ hits: 0, misses: 0 });
  new Counter({
    name: 'packagesync_live_reads_total',
    help: 'Objects the planner read before applying, by where the copy came from: the shared watches, or the API server.',
    labelNames: ['source'],
    registers,
    collect() {
      this.reset();
      this.inc({ source: 'watch' }, liveStats().hits);
      this.inc({ source: 'api' }, liveStats().misses);
    },
  });

  const observeGitFetch = (seconds: number) => gitFetch.observe(seconds);

  const overdueNow = new Gauge({
    name: 'packagesync_reconciles_overdue',
    help: 'Reconciles running past spec.timeout and a margin (their worker was given back; they are still running).',
    registers,
  });
  const overdueTotal = new Counter({
    name: 'packagesync_reconciles_overdue_total',
    help: 'Reconciles that outlived spec.timeout and a margin (ADR 0032).',
    registers,
  });

  let notifyStats = () => ({ depth: 0, oldestSeconds: 0 });
  const notify = notifyMetrics(registry, () => notifyStats());

  return {
    registry,
    notifications: {
      onResult: notify.onResult,
      observe(stats) {
        notifyStats = stats;
      },
    },
    setOverdue(overdue, became) {
      overdueNow.set(overdue);
      if (became) overdueTotal.inc();
    },
    observeReconcile(_ps, seconds, failed) {
      reconcileDuration.observe(seconds);
      reconciles.inc({ result: failed ? 'failure' : 'success' });
    },
    setQueue(queued, running) {
      queueDepth.set(queued);
      inFlight.set(running);
    },
    onApiRequest(verb, status, seconds, resource = '') {
      apiRequests.inc({ verb, code: String(status), resource });
      apiDuration.observe({ verb }, seconds);
    },
    objects: {
      applied: (n) => applied.inc(n),
      pruned: (n) => pruned.inc(n),
      driftCorrected: (n) => driftCorrected.inc(n),
      unchangedCheck: (stopped) => unchangedChecks.inc({ stopped }),
      healthRound: () => healthRounds.inc(),
    },
    observeGitFetch,
    observeRenderer(stats) {
      renderStats = stats;
    },
    observeSandbox(probe) {
      sandbox.reset();
      sandbox.set({ landlock: probe.landlock, abi: String(probe.abi) }, 1);
    },
    observeLiveCache(stats) {
      liveStats = stats;
    },
    instrumentSource(source) {
      return {
        async fetch(src, credentials, signal, opts) {
          const started = performance.now();
          try {
            return await source.fetch(src, credentials, signal, opts);
          } finally {
            observeGitFetch((performance.now() - started) / 1000);
          }
        },
        forget: (url, since) => source.forget?.(url, since),
        ...(source.resolve ? { resolve: source.resolve.bind(source) } : {}),
        // PackageSyncSets resolve an OCI template through it (docs/adr/0042): dropped here, no OCI set resolved
        ...(source.resolveArtifact ? { resolveArtifact: source.resolveArtifact.bind(source) } : {}),
        ...(source.verify ? { verify: source.verify.bind(source) } : {}),
      };
    },
    driftCheck: () => driftChecks.inc(),
    setConditions(ps) {
      const { name, namespace } = ps.metadata;
      perPackageSync.set(namespace, name, conditionStatuses(ps.status?.conditions), ps.status?.drift?.total ?? 0);
    },
    forget(namespace, name) {
      perPackageSync.forget(namespace, name);
    },
    async render() {
      return { contentType: registry.contentType, body: perPackageSync.insertInto(await registry.metrics()) };
    },
  };
}

/**
 * The status each tracked condition type reports. kstatus makes Reconciling and Stalled abnormal-true:
 * absent means False. Ready absent (never reconciled yet) means Unknown.
 */
export function conditionStatuses(
  conditions: readonly { type: string; status: string }[] | undefined,
): Record<(typeof CONDITION_TYPES)[number], ConditionStatus> {
  const of = (type: string): ConditionStatus | undefined => {
    const s = conditions?.find((c) => c.type === type)?.status;
    return (CONDITION_STATUSES as readonly string[]).includes(s ?? '') ? (s as ConditionStatus) : undefined;
  };
  return {
    Ready: of('Ready') ?? 'Unknown',
    Reconciling: of('Reconciling') ?? 'False',
    Stalled: of('Stalled') ?? 'False',
  };
}
