/**
 * Big package: one PackageSync of N objects, cold (nothing exists yet), against the floor (the same objects
 * sent by lib/floor.ts). Then the no-op resync of the same package: the next periodic reconcile, with
 * nothing changed in git or in the cluster, timed and counted from the controller's own metrics (so the
 * API server's background traffic cannot blur the count) and from the API server's.
 */
import {
  apiserverRequests,
  createNamespace,
  deleteNamespace,
  diff,
  writes,
  total,
  type VerbCounts,
} from './cluster.ts';
import { bigObjects, bigPath } from './fixtures.ts';
import { dropFinalizers, type BenchContext } from './fleet.ts';
import { applyFloor } from './floor.ts';
import { memoryOf, packageSyncRequests, scrape, startPackageSync, waitServing, type Proc } from './procs.ts';
import { createAll, isReady, packageSyncOf, PS_PATH, watchUntil } from './units.ts';
import { sumCounter } from './cluster.ts';

export interface BigResult {
  n: number;
  floorSeconds: number;
  seconds: number;
  peakMiB: number;
  /** The controller's own requests during the cold apply, by verb. */
  client: VerbCounts;
  noop?: NoopResult;
}

export interface NoopResult {
  seconds: number;
  client: VerbCounts;
  writes: number;
  requests: number;
  /** API server delta over the same window (includes other components' background traffic). */
  apiserver: VerbCounts;
}

/** The resync interval of the big PackageSync: the no-op measurement waits for one. */
const RESYNC = 20;

export async function runBig(ctx: BenchContext, n: number, noop: boolean): Promise<BigResult> {
  const { client } = ctx.harness;
  const floorNs = `${ctx.prefix}floor-${n}`;
  await createNamespace(client, floorNs);
  const floor = await applyFloor(ctx.kubeconfig, floorNs, bigObjects(n));
  ctx.log(`  floor ${n}: ${floor.seconds.toFixed(1)} s`);
  await deleteNamespace(client, floorNs);

  const ns = `${ctx.prefix}big-${n}`;
  await createNamespace(client, ns);
  const proc = startPackageSync({
    kubeconfig: ctx.kubeconfig,
    concurrency: ctx.concurrency,
    metricsPort: ctx.portBase + 1,
    tag: `big-${n}`,
    nodeArgs: ctx.nodeArgs,
  });
  try {
    await waitServing(proc);
    const before = packageSyncRequests(await scrape(proc));
    const watch = watchUntil(client, PS_PATH(ns), 1, isReady, 30 * 60_000);
    const started = performance.now();
    const unit = { name: 'big', url: ctx.git.big.url, path: bigPath(n), interval: `${RESYNC}s`, wait: false };
    await createAll(client, [{ path: PS_PATH(ns), body: packageSyncOf(ns, unit) }]);
    const seconds = ((await watch.ready) - started) / 1000;
    watch.stop();
    await reconcilesReach(proc, 1);
    const result: BigResult = {
      n,
      floorSeconds: floor.seconds,
      seconds,
      peakMiB: memoryOf(proc.child.pid!).peakMiB,
      client: diff(packageSyncRequests(await scrape(proc)), before),
    };
    if (noop) result.noop = await measureNoop(ctx, proc);
    return result;
  } finally {
    await proc.stop();
    await dropFinalizers(client, PS_PATH(ns));
    await deleteNamespace(client, ns).catch(() => undefined);
  }
}

/** Waits for the next periodic reconcile and reports what it cost. */
async function measureNoop(ctx: BenchContext, proc: Proc): Promise<NoopResult> {
  const text = await scrape(proc);
  const done = count(text);
  const clientBefore = packageSyncRequests(text);
  const durationBefore = durationSum(text);
  const apiBefore = await apiserverRequests(ctx.harness.client);
  const after = await reconcilesReach(proc, done + 1, (RESYNC + 120) * 1000);
  const apiAfter = await apiserverRequests(ctx.harness.client);
  const client = diff(packageSyncRequests(after), clientBefore);
  return {
    seconds: durationSum(after) - durationBefore,
    client,
    writes: writes(client),
    requests: total(client),
    apiserver: diff(apiAfter, apiBefore, { GET: 1 }),
  };
}

const reconciles = (metrics: string) => sumCounter(metrics, 'packagesync_reconcile_total', 'result');
const count = (m: string) => Object.values(reconciles(m)).reduce((a, b) => a + b, 0);
const durationSum = (m: string) => Number(/^packagesync_reconcile_duration_seconds_sum (\S+)$/m.exec(m)?.[1] ?? 0);

/** Polls the controller's metrics until `n` reconciles have finished; returns that scrape. */
async function reconcilesReach(proc: Proc, n: number, timeoutMs = 600_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await scrape(proc);
    if (count(text) >= n) return text;
    if (Date.now() > deadline) throw new Error(`no reconcile #${n} within ${timeoutMs / 1000}s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
