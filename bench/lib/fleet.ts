/**
 * Fleet: N units of 4 objects each, wait on, all from one git server: creation → all Ready, the
 * controller's peak RSS, and the API requests made, for PackageSync and for Flux on the same control plane.
 * Each run gets a fresh controller process (so its peak RSS is its own) and a fresh namespace, removed
 * afterwards with the controllers stopped and finalizers dropped, so cleanup is never measured.
 */
import PQueue from 'p-queue';
import type { KubeClient } from '../../src/adapters/kube/client.ts';
import {
  apiserverRequests,
  createNamespace,
  deleteNamespace,
  diff,
  metricValue,
  type CountingClient,
  type VerbCounts,
} from './cluster.ts';
import { kustomizePlainUnitPath, kustomizeUnitPath, unitName, unitPath, type GitFixtures } from './fixtures.ts';
import {
  fluxRequests,
  memoryOf,
  treeMemoryOf,
  PeakFootprint,
  heapSnapshot,
  packageSyncRequests,
  scrape,
  startFlux,
  startPackageSync,
  waitServing,
  type Memory,
} from './procs.ts';
import {
  createAll,
  fluxSourceOf,
  fluxUnitOf,
  GITREPO_PATH,
  HELMCHART_PATH,
  HR_PATH,
  isReady,
  KS_PATH,
  packageSyncOf,
  PS_PATH,
  watchUntil,
} from './units.ts';
import { resync } from './fleet-resync.ts';
import { cpuWindow, type ControlPlaneCpu, type ControlPlanePids } from './control-plane.ts';
import { cpus } from 'node:os';
import { cpuSeconds, measureIdle, measureRestart, type IdleFigures, type RestartFigures } from './steady.ts';
import { RECONCILE_REQUESTED_AT } from '../../src/api/packagesync.ts';
import type { LoadBeforeRun } from './machine-load.ts';

export interface BenchContext {
  kubeconfig: string;
  harness: CountingClient;
  git: GitFixtures;
  concurrency: number;
  flux?: { sourceDir: string; kustomizeDir: string };
  nodeArgs?: string[];
  /** --heap-snapshot: where the PackageSync controller writes a heap snapshot once its fleet is all Ready. */
  heapSnapshotDir?: string;
  /** Prefix of every namespace the bench creates (the smoke test runs on the shared cluster). */
  prefix: string;
  /** First of four loopback ports for the PackageSync controllers' metrics and webhook. */
  portBase: number;
  /** The fleet's spec.interval (default 10m). */
  fleetInterval?: string;
  /** Rest after Ready before the at-rest window (default 0). */
  idleWarmupSeconds?: number;
  /** The control plane's processes (control-plane.ts): their CPU over each fleet run; absent: not measured. */
  controlPlane?: ControlPlanePids;
  log(msg: string): void;
}

export interface FleetResult {
  tool: 'PackageSync' | 'Flux';
  n: number;
  seconds: number;
  /** Peak RSS of every process of the tool, MiB (Flux: source-controller + kustomize-controller). */
  peakMiB: number;
  perProcessPeakMiB: Record<string, number>;
  /** The tool's resident peak with shared pages once, sampled over the cold sync (procs.ts PeakFootprint; absent in older results). */
  peakFootprint?: { peakMiB: number; perProcessMiB: Record<string, number> };
  /** RSS after idling `idleSeconds` with everything Ready (only when asked). */
  idleMiB?: number;
  idleSeconds?: number;
  /** Controller CPU seconds from start to all Ready (process_cpu_seconds_total; Flux: both controllers). */
  cpuSeconds?: number;
  /** PackageSync, at rest afterwards: CPU share and request rate (issue 18.2). */
  idle?: IdleFigures;
  /** PackageSync, killed and started again: its first pass over every unit (issue 18.2). */
  restart?: RestartFigures;
  /** apiserver_request_total delta by verb, minus the harness's own requests. */
  apiserver: VerbCounts;
  /** The controller's own client-side request count by verb/method. */
  client: VerbCounts;
  /** Set when the run was stopped at its time cap before all N were Ready: `seconds` is then a lower bound. */
  readyAtCap?: number;
  /** Which fleet: plain YAML units, or kustomize overlays over a shared base (both tools run kustomize). */
  shape?: FleetShape;
  /** The kustomize fleet: what the first sync spent rendering, and a no-op resync of every unit. */
  render?: RenderFigures;
  /** kube-apiserver, kube-controller-manager, etcd and kwok CPU over creation → all Ready (absent in older results). */
  controlPlane?: ControlPlaneCpu;
  /** The machine's 1-minute load average when the run started (machine-load.ts; absent in older results). */
  load?: LoadBeforeRun;
  /** Seconds to a quarter, half, three quarters and all of the fleet Ready (absent in older results). */
  readyQuarters?: number[];
}

/** kustomize-objects: the kustomize fleet's objects as plain YAML (fixtures.ts kplain/), its same-objects baseline. */
export type FleetShape = 'plain' | 'kustomize' | 'kustomize-objects' | 'helm';

export interface RenderFigures {
  /** PackageSync: kustomize subprocesses and their seconds over the cold sync (packagesync_render_*). */
  coldToolRuns?: number;
  coldToolSeconds?: number;
  /** Every unit asked to reconcile again (the request annotation) with nothing changed: until all N handled it. */
  resyncSeconds: number;
  /** Reconciles in the resync, and their mean duration (PackageSync: packagesync_reconcile_duration_seconds;
   * Flux: controller_runtime_reconcile_time_seconds of the kustomization controller). */
  resyncReconciles: number;
  resyncSecondsPerReconcile: number;
  /** PackageSync: kustomize runs and render-cache hits in the resync (Flux builds every time: no cache). */
  resyncToolRuns?: number;
  resyncCacheHits?: number;
  /** Writes the API server counted in the resync window (status updates included). */
  resyncWrites: number;
}

const fleetPath = (shape: FleetShape, i: number) =>
  shape === 'kustomize'
    ? kustomizeUnitPath(i)
    : shape === 'kustomize-objects'
      ? kustomizePlainUnitPath(i)
      : unitPath(i);
const fleetNs = (ctx: BenchContext, shape: FleetShape, tool: string, n: number) =>
  `${ctx.prefix}${shape === 'kustomize' ? 'kfleet' : shape === 'kustomize-objects' ? 'kplain' : 'fleet'}-${tool}-${n}`;

const snapshot = (c: CountingClient) => ({ ...c.own });

export async function runFleetPackageSync(
  ctx: BenchContext,
  n: number,
  idleSeconds = 0,
  shape: FleetShape = 'plain',
  restart = false,
): Promise<FleetResult> {
  const ns = fleetNs(ctx, shape, 'ps', n);
  const { client } = ctx.harness;
  await createNamespace(client, ns);
  const start = (tag = `fleet-${n}`) =>
    startPackageSync({
      kubeconfig: ctx.kubeconfig,
      concurrency: ctx.concurrency,
      metricsPort: ctx.portBase,
      tag,
      nodeArgs: ctx.nodeArgs,
    });
  let proc = start();
  try {
    await waitServing(proc);
    const units = Array.from({ length: n }, (_, i) => ({
      name: unitName(i),
      url: ctx.git.fleet.url,
      path: fleetPath(shape, i),
      interval: ctx.fleetInterval ?? '10m',
      wait: true,
    }));
    const cold = renderCounters(await scrape(proc));
    const footprint = new PeakFootprint(() => [{ name: 'controller', pid: proc.child.pid! }]);
    const m = await measure(ctx, PS_PATH(ns), n, 0, async () => {
      await createAll(
        client,
        units.map((u) => ({ path: PS_PATH(ns), body: packageSyncOf(ns, u) })),
      );
    }).finally(() => footprint.stop());
    const mem: Memory = memoryOf(proc.child.pid!);
    // a built fleet renders in the controller's render workers: their peaks count (issue 27: controller + workers)
    const perProcessPeakMiB = shape === 'kustomize' ? treeMemoryOf(proc.child.pid!) : { packagesync: mem.peakMiB };
    const atReady = await scrape(proc);
    if (ctx.heapSnapshotDir) ctx.log(`  heap snapshot: ${await heapSnapshot(proc, ctx.heapSnapshotDir)}`);
    const result: FleetResult = {
      tool: 'PackageSync',
      n,
      seconds: m.seconds,
      readyQuarters: m.readyQuarters,
      peakMiB: Object.values(perProcessPeakMiB).reduce((a, b) => a + b, 0),
      perProcessPeakMiB,
      peakFootprint: footprint.stop(),
      apiserver: m.apiserver,
      client: packageSyncRequests(atReady),
      cpuSeconds: cpuSeconds(atReady),
      controlPlane: m.controlPlane,
      shape,
    };
    if (shape === 'kustomize') {
      const afterCold = renderCounters(await scrape(proc));
      const r = await resync(ctx, PS_PATH(ns), n, RECONCILE_REQUESTED_AT, () => scrape(proc), {
        sum: 'packagesync_reconcile_duration_seconds_sum',
        count: 'packagesync_reconcile_duration_seconds_count',
      });
      const afterResync = renderCounters(await scrape(proc));
      result.render = {
        coldToolRuns: afterCold.runs - cold.runs,
        coldToolSeconds: afterCold.seconds - cold.seconds,
        ...r,
        resyncToolRuns: afterResync.runs - afterCold.runs,
        resyncCacheHits: afterResync.hits - afterCold.hits,
      };
    }
    if (idleSeconds > 0) {
      const warmup = ctx.idleWarmupSeconds ?? 0;
      if (warmup > 0) ctx.log(`  resting ${warmup} s before the at-rest window`);
      await new Promise((r) => setTimeout(r, warmup * 1000));
      result.idle = { ...(await measureIdle(proc, idleSeconds)), warmupSeconds: warmup };
      result.idleMiB = result.idle.rssMiB;
      result.idleSeconds = idleSeconds;
      ctx.log(
        `  idle: ${result.idle.cpuPercent.toFixed(2)} % CPU, ${result.idle.requestsPerSecond.toFixed(2)} requests/s, ` +
          `${result.idle.reconciles ?? 0} reconciles (${result.idle.stoppedBeforeLoad ?? 0} before loading); ` +
          `GC ${((result.idle.gc?.seconds ?? 0) * 1000).toFixed(0)} ms: ${result.idle.gc?.minor ?? 0} minor, ` +
          `${result.idle.gc?.major ?? 0} major`,
      );
    }
    if (restart) {
      ctx.log(`  restart: SIGKILL, then a new controller checks all ${n}`);
      const r = await measureRestart(client, proc, n, () => start(`fleet-${n}-restart`), ctx.log);
      proc = r.proc;
      result.restart = r.figures;
      ctx.log(
        `  restart: ${r.figures.seconds.toFixed(1)} s, ${r.figures.writes} writes, peak ${r.figures.peakRequestsPerSecond} requests/s, reconcile ${r.figures.meanReconcileSeconds?.toFixed(2)} s (git ${r.figures.meanGitFetchSeconds?.toFixed(2)} s)`,
      );
    }
    return result;
  } finally {
    await proc.stop();
    await dropFinalizers(client, PS_PATH(ns));
    await deleteNamespace(client, ns);
  }
}

export async function runFleetFlux(
  ctx: BenchContext,
  n: number,
  idleSeconds = 0,
  capSeconds = 0,
  shape: FleetShape = 'plain',
): Promise<FleetResult> {
  if (!ctx.flux) throw new Error('Flux binaries not built');
  const ns = fleetNs(ctx, shape, 'flux', n);
  const { client } = ctx.harness;
  await createNamespace(client, ns);
  const procs = startFlux({ kubeconfig: ctx.kubeconfig, ...ctx.flux, concurrency: ctx.concurrency, tag: `fleet-${n}` });
  const all = [procs.source, procs.kustomize];
  try {
    await Promise.all(all.map((p) => waitServing(p)));
    const units = Array.from({ length: n }, (_, i) => ({
      name: unitName(i),
      url: ctx.git.fleet.url,
      path: fleetPath(shape, i),
      interval: '10m',
      wait: true,
    }));
    const footprint = new PeakFootprint(() =>
      all.map((p) => ({ name: p.name.replace(/-fleet-\d+$/, ''), pid: p.child.pid! })),
    );
    const m = await measure(ctx, KS_PATH(ns), n, capSeconds, async () => {
      await createAll(client, [{ path: GITREPO_PATH(ns), body: fluxSourceOf(ns, ctx.git.fleet.url, '10m') }]);
      await createAll(
        client,
        units.map((u) => ({ path: KS_PATH(ns), body: fluxUnitOf(ns, u) })),
      );
    }).finally(() => footprint.stop());
    const perProcessPeakMiB: Record<string, number> = {};
    const clientCounts: VerbCounts = {};
    let fluxCpu = 0;
    for (const p of all) {
      perProcessPeakMiB[p.name.replace(/-fleet-\d+$/, '')] = memoryOf(p.child.pid!).peakMiB;
      const metrics = await scrape(p);
      fluxCpu += cpuSeconds(metrics);
      for (const [k, v] of Object.entries(fluxRequests(metrics))) clientCounts[k] = (clientCounts[k] ?? 0) + v;
    }
    const result: FleetResult = {
      tool: 'Flux',
      n,
      seconds: m.seconds,
      readyQuarters: m.readyQuarters,
      peakMiB: Object.values(perProcessPeakMiB).reduce((a, b) => a + b, 0),
      perProcessPeakMiB,
      peakFootprint: footprint.stop(),
      apiserver: m.apiserver,
      client: clientCounts,
      cpuSeconds: fluxCpu,
      controlPlane: m.controlPlane,
      ...(m.readyAtCap !== undefined ? { readyAtCap: m.readyAtCap } : {}),
      shape,
    };
    if (shape === 'kustomize' && m.readyAtCap === undefined) {
      // Flux's reconcile request annotation, handled as PackageSync's is (status.lastHandledReconcileAt)
      result.render = await resync(
        ctx,
        KS_PATH(ns),
        n,
        'reconcile.fluxcd.io/requestedAt',
        () => scrape(procs.kustomize),
        {
          sum: 'controller_runtime_reconcile_time_seconds_sum',
          count: 'controller_runtime_reconcile_time_seconds_count',
          labels: 'controller="kustomization"',
        },
      );
    }
    if (idleSeconds > 0) {
      await new Promise((r) => setTimeout(r, idleSeconds * 1000));
      result.idleMiB = all.reduce((a, p) => a + memoryOf(p.child.pid!).rssMiB, 0);
      result.idleSeconds = idleSeconds;
    }
    return result;
  } finally {
    await Promise.all(all.map((p) => p.stop()));
    await dropFinalizers(client, KS_PATH(ns));
    await dropFinalizers(client, GITREPO_PATH(ns));
    await deleteNamespace(client, ns);
  }
}

/**
 * Runs `create`, waits until `n` objects of `collection` are Ready; times it and counts API requests.
 * With a cap (seconds, 0 = none), stops waiting then and says how many were Ready. Without one it waits up to
 * NO_CAP_SECONDS, then reports what it has as capped (a lower bound), never throwing the run's results away: it
 * once gave up on Flux's kustomize fleet at a fixed 30 minutes (600/1,000 Ready) and lost the whole run.
 */
/** "No cap": Flux's kustomize fleet of 1,000 needs about 50 minutes on this machine; a stuck run still ends. */
const NO_CAP_SECONDS = 6 * 3600;

export async function measure(
  ctx: BenchContext,
  collection: string,
  n: number,
  capSeconds: number,
  create: () => Promise<void>,
): Promise<{
  seconds: number;
  apiserver: VerbCounts;
  readyAtCap?: number;
  controlPlane: ControlPlaneCpu;
  readyQuarters: number[];
}> {
  const { client } = ctx.harness;
  const before = await apiserverRequests(client);
  const own = snapshot(ctx.harness);
  const limitSeconds = capSeconds > 0 ? capSeconds : NO_CAP_SECONDS;
  const watch = watchUntil(client, collection, n, isReady, (limitSeconds + 600) * 1000);
  const cpu = cpuWindow(ctx.controlPlane, cpus().length);
  const started = performance.now();
  const progress = setInterval(() => ctx.log(`  ${watch.readyNow()}/${n} Ready`), 30_000);
  // seconds until a quarter, half, three quarters of the fleet were Ready (sampled every 250 ms): where a tail is
  const readyQuarters: number[] = [];
  const quarters = setInterval(() => {
    while (readyQuarters.length < 3 && watch.readyNow() >= (n * (readyQuarters.length + 1)) / 4)
      readyQuarters.push((performance.now() - started) / 1000);
  }, 250);
  try {
    await create();
    let readyAtCap: number | undefined;
    const cap = new Promise<number>((r) => {
      setTimeout(() => r(-1), Math.max(0, started + limitSeconds * 1000 - performance.now())).unref();
    });
    let readyAt = await Promise.race([watch.ready, cap]);
    if (readyAt < 0) {
      readyAtCap = watch.readyNow();
      readyAt = performance.now();
    }
    const controlPlane = cpu();
    const seconds = (readyAt - started) / 1000;
    // The harness's own requests in the window: its creates, the informer's LIST, and the first /metrics
    // scrape (counted by the API server when it completes, so inside the window; the second one is not).
    const harness = diff(ctx.harness.own, own);
    harness.GET = (harness.GET ?? 0) + 1;
    const after = await apiserverRequests(client);
    return {
      seconds,
      apiserver: diff(after, before, harness),
      controlPlane,
      readyQuarters: [...readyQuarters, seconds],
      ...(readyAtCap !== undefined ? { readyAtCap } : {}),
    };
  } finally {
    clearInterval(progress);
    clearInterval(quarters);
    watch.stop();
  }
}

/** The render counters PackageSync exports (unlabelled counters). */
function renderCounters(metrics: string): { runs: number; seconds: number; hits: number } {
  return {
    runs: metricValue(metrics, 'packagesync_render_tool_runs_total'),
    seconds: metricValue(metrics, 'packagesync_render_tool_seconds_total'),
    hits: metricValue(metrics, 'packagesync_render_cache_hits_total'),
  };
}

/** Removes the finalizers of every object in a collection, so a namespace can go while no controller runs. */
export async function dropFinalizers(client: KubeClient, collection: string): Promise<void> {
  let items: { metadata: { name: string; finalizers?: string[] } }[];
  try {
    items = (await client.request<{ items: typeof items }>('GET', collection)).items;
  } catch {
    return; // the kind is not installed
  }
  const q = new PQueue({ concurrency: 32 });
  await Promise.all(
    items
      .filter((i) => i.metadata.finalizers?.length)
      .map((i) =>
        q.add(() =>
          client
            .request('PATCH', `${collection}/${i.metadata.name}`, {
              contentType: 'application/merge-patch+json',
              body: { metadata: { finalizers: null } },
            })
            .catch(() => undefined),
        ),
      ),
  );
}

/** Namespaces an interrupted run left behind (same prefix): removed before measuring anything. */
export async function removeLeftovers(client: KubeClient, prefix: string): Promise<void> {
  const list = await client.request<{ items: { metadata: { name: string } }[] }>('GET', '/api/v1/namespaces');
  for (const { metadata } of list.items.filter((n) => n.metadata.name.startsWith(prefix))) {
    for (const path of [PS_PATH, KS_PATH, HR_PATH, HELMCHART_PATH, GITREPO_PATH])
      await dropFinalizers(client, path(metadata.name));
    await deleteNamespace(client, metadata.name);
  }
}
