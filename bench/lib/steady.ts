/**
 * A synced fleet at rest and after a restart (issue 18.2), for the PackageSync controller:
 * - idle: with every unit Ready and `interval: 10m`, the controller's CPU (process_cpu_seconds_total) and its own
 *   API requests over a window, as a share of one core and a rate;
 * - restart: the controller killed with SIGKILL and started again; the time until it has checked every unit once
 *   (packagesync_reconcile_duration_seconds_count reaching N), what it wrote meanwhile (every unit unchanged:
 *   the target is none), and its request rate second by second (the peak shows whether a restart is a herd).
 */
import type { KubeClient } from '../../src/adapters/kube/client.ts';
import { apiserverFleetWrites, diff, metricValue, total, type VerbCounts } from './cluster.ts';
import { memoryOf, packageSyncRequests, packageSyncWrites, scrape, waitServing, type Proc } from './procs.ts';

export interface IdleFigures {
  seconds: number;
  rssMiB: number;
  /** Controller CPU over the window, percent of one core. */
  cpuPercent: number;
  /** The controller's own requests over the window, by verb, and per second. */
  requests: VerbCounts;
  requestsPerSecond: number;
  /** Reconciles and watch-triggered drift checks in the window (what the CPU went on). */
  reconciles?: number;
  driftChecks?: number;
  /** Of the reconciles, periodic checks that found nothing changed and stopped before rendering (ADR 0031). */
  unchangedChecks?: number;
  /** Of those, the ones that stopped before even loading the PackageSync (engine/unchanged-check.ts). */
  stoppedBeforeLoad?: number;
  /** How long the fleet rested after Ready before the window. */
  warmupSeconds?: number;
  /**
   * Garbage collection in the window (prom-client's nodejs_gc_duration_seconds): its time, and how many minor
   * (scavenge) and major (mark-sweep-compact) collections. Scavenges count allocation: each is one semi-space
   * filled (1 MiB with the image's --max-semi-space-size=1), a measure a slow or fast VM does not move.
   */
  gc?: { seconds: number; minor: number; major: number };
}

export interface RestartFigures {
  /** SIGKILL → every unit reconciled once by the new process. */
  seconds: number;
  /** Of which: start → serving /metrics (module load, flags). */
  startSeconds: number;
  reconciles: number;
  requests: VerbCounts;
  /** The controller's own writes over the restart: POST, PUT, PATCH, DELETE but access reviews (procs.ts). */
  writes: number;
  /** What the API server counted to the fleet's kinds, their PackageSyncs and events (any client). */
  writesByResource: VerbCounts;
  /** The highest request rate over one sampling interval (5 s), and the mean rate over the restart. */
  peakRequestsPerSecond: number;
  meanRequestsPerSecond: number;
  cpuSeconds: number;
  /** CPU spent by the time it served /metrics (module load, flags): not the checks'. */
  startCpuSeconds?: number;
  peakMiB: number;
  /** Mean reconcile and git fetch (ref resolution included) in the restarted process. */
  meanReconcileSeconds?: number;
  meanGitFetchSeconds?: number;
  /** Objects its live reads took from the watches vs from the API server. */
  liveReads?: { watch: number; api: number };
}

/**
 * How often the restart is sampled. Each /metrics scrape renders every PackageSync's condition series (9 each):
 * at 5,000 units a scrape a second was 19 % of the restarted controller's CPU in its profile — the harness
 * measuring itself. Prometheus scrapes every 15–30 s.
 */
const SAMPLE_MS = 5_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const cpuSeconds = (metrics: string) => metricValue(metrics, 'process_cpu_seconds_total');

const gcCount = (metrics: string, kind: string) =>
  metricValue(metrics, 'nodejs_gc_duration_seconds_count', `kind="${kind}"`);

export async function measureIdle(proc: Proc, seconds: number): Promise<IdleFigures> {
  const before = await scrape(proc);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const after = await scrape(proc);
  const window = (performance.now() - t0) / 1000;
  // the two scrapes are the harness's: /metrics is not an API request, so nothing to subtract
  const requests = diff(packageSyncRequests(after), packageSyncRequests(before));
  const delta = (name: string) => metricValue(after, name) - metricValue(before, name);
  return {
    seconds: window,
    rssMiB: memoryOf(proc.child.pid!).rssMiB,
    cpuPercent: (100 * (cpuSeconds(after) - cpuSeconds(before))) / window,
    requests,
    requestsPerSecond: total(requests) / window,
    reconciles: delta('packagesync_reconcile_duration_seconds_count'),
    driftChecks: delta('packagesync_drift_checks_total'),
    unchangedChecks: delta('packagesync_unchanged_checks_total'),
    stoppedBeforeLoad:
      metricValue(after, 'packagesync_unchanged_checks_total', 'stopped="before-load"') -
      metricValue(before, 'packagesync_unchanged_checks_total', 'stopped="before-load"'),
    gc: {
      seconds: delta('nodejs_gc_duration_seconds_sum'),
      minor: gcCount(after, 'minor') - gcCount(before, 'minor'),
      major: gcCount(after, 'major') - gcCount(before, 'major'),
    },
  };
}

/** Kills `proc` (SIGKILL: no goodbye) and measures its successor's first pass over `n` units. */
export async function measureRestart(
  apiserver: KubeClient,
  proc: Proc,
  n: number,
  start: () => Proc,
  log: (msg: string) => void,
  timeoutMs = 30 * 60_000,
): Promise<{ proc: Proc; figures: RestartFigures }> {
  const exited = new Promise<void>((r) => proc.child.once('exit', () => r()));
  const writesBefore = await apiserverFleetWrites(apiserver);
  proc.child.kill('SIGKILL');
  await exited;
  const t0 = performance.now();
  const next = start();
  await waitServing(next);
  const startSeconds = (performance.now() - t0) / 1000;
  const startCpuSeconds = cpuSeconds(await scrape(next));
  let requests: VerbCounts = {};
  let writes: VerbCounts = {};
  let reconciles = 0;
  let peak = 0;
  let last = 0;
  let lastLog = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    const m = await scrape(next);
    requests = packageSyncRequests(m);
    writes = packageSyncWrites(m);
    reconciles = metricValue(m, 'packagesync_reconcile_duration_seconds_count');
    peak = Math.max(peak, (total(requests) - last) / (SAMPLE_MS / 1000));
    last = total(requests);
    if (reconciles >= n) break;
    if (performance.now() - lastLog > 30_000) {
      log(`  restart: ${reconciles}/${n} reconciled, ${total(requests)} requests`);
      lastLog = performance.now();
    }
    await sleep(SAMPLE_MS);
  }
  const seconds = (performance.now() - t0) / 1000;
  const m = await scrape(next);
  const writesByResource = diff(await apiserverFleetWrites(apiserver), writesBefore);
  const mean = (name: string) => metricValue(m, `${name}_sum`) / Math.max(1, metricValue(m, `${name}_count`));
  return {
    proc: next,
    figures: {
      seconds,
      startSeconds,
      reconciles,
      requests,
      // the controller's own writes (applies, status and finalizer patches, deletes, creates: an event follows only
      // a change), by the resource label, so its access reviews (POSTs that write nothing) are left out; the API
      // server's count for the fleet's kinds (writesByResource) includes other clients on a shared cluster (smoke)
      writes: total(writes),
      writesByResource,
      peakRequestsPerSecond: peak,
      meanRequestsPerSecond: total(requests) / seconds,
      cpuSeconds: cpuSeconds(m),
      startCpuSeconds,
      peakMiB: memoryOf(next.child.pid!).peakMiB,
      meanReconcileSeconds: mean('packagesync_reconcile_duration_seconds'),
      meanGitFetchSeconds: mean('packagesync_git_fetch_duration_seconds'),
      liveReads: {
        watch: metricValue(m, 'packagesync_live_reads_total', 'source="watch"'),
        api: metricValue(m, 'packagesync_live_reads_total', 'source="api"'),
      },
    },
  };
}
