/**
 * The Helm fleet (issue 27): N releases of one `helm create` chart (fixtures.ts commitHelmFleet), wait on, the
 * same values in both tools. PackageSync: a PackageSync per unit rendering the chart with Helm (its render
 * workers: the Helm SDK in-process, ADR 0038). Flux: source-controller builds the chart once (one GitRepository,
 * one HelmChart) and helm-controller installs a HelmRelease per unit from it (spec.chartRef). Time from the first
 * create to all N Ready, the peak RSS of every process of each tool (PackageSync: the controller and its render
 * workers), and the API requests, as the plain fleet measures them.
 */
import { createNamespace, deleteNamespace, type VerbCounts } from './cluster.ts';
import { HELM_CHART_PATH, unitName } from './fixtures.ts';
import { dropFinalizers, measure, type BenchContext, type FleetResult } from './fleet.ts';
import {
  fluxRequests,
  memoryOf,
  packageSyncRequests,
  scrape,
  startFluxHelm,
  startPackageSync,
  treeMemoryOf,
  PeakFootprint,
  heapSnapshot,
  waitServing,
} from './procs.ts';
import { cpuSeconds } from './steady.ts';
import {
  createAll,
  fluxHelmChartOf,
  fluxHelmReleaseOf,
  fluxSourceOf,
  GITREPO_PATH,
  HELMCHART_PATH,
  HR_PATH,
  packageSyncHelmOf,
  PS_PATH,
} from './units.ts';

export interface HelmFluxBinaries {
  sourceDir: string;
  helmDir: string;
}

const units = (ctx: BenchContext, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    name: unitName(i),
    url: ctx.git.fleet.url,
    path: HELM_CHART_PATH,
    interval: ctx.fleetInterval ?? '10m',
    wait: true,
  }));

export async function runHelmFleetPackageSync(ctx: BenchContext, n: number): Promise<FleetResult> {
  const ns = `${ctx.prefix}hfleet-ps-${n}`;
  const { client } = ctx.harness;
  await createNamespace(client, ns);
  const proc = startPackageSync({
    kubeconfig: ctx.kubeconfig,
    concurrency: ctx.concurrency,
    metricsPort: ctx.portBase,
    tag: `hfleet-${n}`,
    nodeArgs: ctx.nodeArgs,
  });
  try {
    await waitServing(proc);
    const footprint = new PeakFootprint(() => [{ name: 'controller', pid: proc.child.pid! }]);
    const m = await measure(ctx, PS_PATH(ns), n, 0, () =>
      createAll(
        client,
        units(ctx, n).map((u) => ({ path: PS_PATH(ns), body: packageSyncHelmOf(ns, u) })),
      ),
    ).finally(() => footprint.stop());
    // the controller and its render workers (the Helm SDK runs there): the tool's whole footprint
    const perProcessPeakMiB = treeMemoryOf(proc.child.pid!);
    const metrics = await scrape(proc);
    if (ctx.heapSnapshotDir) ctx.log(`  heap snapshot: ${await heapSnapshot(proc, ctx.heapSnapshotDir)}`);
    return {
      tool: 'PackageSync',
      n,
      seconds: m.seconds,
      readyQuarters: m.readyQuarters,
      peakMiB: Object.values(perProcessPeakMiB).reduce((a, b) => a + b, 0),
      perProcessPeakMiB,
      peakFootprint: footprint.stop(),
      apiserver: m.apiserver,
      client: packageSyncRequests(metrics),
      cpuSeconds: cpuSeconds(metrics),
      controlPlane: m.controlPlane,
      shape: 'helm',
    };
  } finally {
    await proc.stop();
    await dropFinalizers(client, PS_PATH(ns));
    await deleteNamespace(client, ns);
  }
}

export async function runHelmFleetFlux(
  ctx: BenchContext,
  flux: HelmFluxBinaries,
  n: number,
  capSeconds = 0,
): Promise<FleetResult> {
  const ns = `${ctx.prefix}hfleet-flux-${n}`;
  const { client } = ctx.harness;
  await createNamespace(client, ns);
  const procs = startFluxHelm({
    kubeconfig: ctx.kubeconfig,
    ...flux,
    concurrency: ctx.concurrency,
    tag: `hfleet-${n}`,
  });
  try {
    await Promise.all(procs.map((p) => waitServing(p)));
    const footprint = new PeakFootprint(() =>
      procs.map((p) => ({ name: p.name.replace(/-hfleet-\d+$/, ''), pid: p.child.pid! })),
    );
    const m = await measure(ctx, HR_PATH(ns), n, capSeconds, async () => {
      await createAll(client, [
        { path: GITREPO_PATH(ns), body: fluxSourceOf(ns, ctx.git.fleet.url, '10m') },
        { path: HELMCHART_PATH(ns), body: fluxHelmChartOf(ns, HELM_CHART_PATH, '10m') },
      ]);
      await createAll(
        client,
        units(ctx, n).map((u) => ({ path: HR_PATH(ns), body: fluxHelmReleaseOf(ns, u) })),
      );
    }).finally(() => footprint.stop());
    const perProcessPeakMiB: Record<string, number> = {};
    const clientCounts: VerbCounts = {};
    let fluxCpu = 0;
    for (const p of procs) {
      perProcessPeakMiB[p.name.replace(/-hfleet-\d+$/, '')] = memoryOf(p.child.pid!).peakMiB;
      const metrics = await scrape(p);
      fluxCpu += cpuSeconds(metrics);
      for (const [k, v] of Object.entries(fluxRequests(metrics))) clientCounts[k] = (clientCounts[k] ?? 0) + v;
    }
    return {
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
      shape: 'helm',
    };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    // helm-controller's release Secrets go with the namespace
    for (const path of [HR_PATH, HELMCHART_PATH, GITREPO_PATH]) await dropFinalizers(client, path(ns));
    await deleteNamespace(client, ns);
  }
}
