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
import { bigObjects, bigPath, bigPrunedNames, commitBigHalf } from './fixtures.ts';
import { PackageSyncs } from '../../src/adapters/kube/packagesyncs.ts';
import type { KubeClient } from '../../src/adapters/kube/client.ts';
import type { PackageSync } from '../../src/api/packagesync.ts';
import { computeHealth } from '../../src/core/health/compute.ts';
import type { KubeObject } from '../../src/core/object.ts';
import { dropFinalizers, type BenchContext } from './fleet.ts';
import { applyFloor } from './floor.ts';
import { memoryOf, packageSyncRequests, scrape, startPackageSync, waitServing, type Proc } from './procs.ts';
import { createAll, isReady, packageSyncOf, PS_PATH, watchUntil } from './units.ts';
import { metricValue, sumCounter } from './cluster.ts';

export interface BigResult {
  n: number;
  floorSeconds: number;
  seconds: number;
  peakMiB: number;
  /** The controller's own requests during the cold apply, by verb. */
  client: VerbCounts;
  noop?: NoopResult;
  /** From Ready until every Deployment of the package was Current (kstatus), before the no-op is measured. */
  atRestSeconds?: number;
  prune?: PruneResult;
  /** How the inventory was stored once the package was applied: inline entries, or shards (ADR 0027). */
  inventory?: { entries: number; shards: number; count: number; statusBytes: number };
}

/** Half the package removed from git: the reconcile that prunes it, and whether it was right. */
export interface PruneResult {
  pruned: number;
  seconds: number;
  client: VerbCounts;
  /** Objects of the package still there that should be gone, and gone that should be there. */
  leftBehind: number;
  wronglyDeleted: number;
  /** The inventory (read through the same reader as the controller) equals the live objects. */
  inventoryMatchesLive: boolean;
}

export interface NoopResult {
  seconds: number;
  /**
   * The controller's CPU over the window (process_cpu_seconds_total: the check, and whatever else ran meanwhile):
   * less moved by the machine's load than the wall time.
   */
  cpuSeconds?: number;
  client: VerbCounts;
  writes: number;
  requests: number;
  /** API server delta over the same window (includes other components' background traffic). */
  apiserver: VerbCounts;
  /**
   * Reconciles in the window that rendered the package: those that did not stop at an unchanged check
   * (packagesync_unchanged_checks_total, before loading or before rendering). The first periodic check after an
   * apply renders once, to find the package settled and keep its checkpoint (ADR 0031); every later one renders
   * nothing.
   */
  renders?: number;
  /** The periodic check after that one: what the fleet's checks cost at rest (no render, no write). */
  next?: Omit<NoopResult, 'next' | 'requested'>;
  /** A requested reconcile of the unchanged package: no shortcut, the full check's cost. */
  requested?: Omit<NoopResult, 'next' | 'requested'>;
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
    result.inventory = await storedInventory(client, ns);
    if (noop) {
      // the package is Ready at once (wait: false) while kube-controller-manager still writes its Deployments'
      // status: a check while it does sees copies the settled check did not (new resourceVersions) and rightly
      // renders again. The no-op is measured on a package at rest, as a fleet's checks find it.
      result.atRestSeconds = await untilDeploymentsCurrent(client, ns);
      // a check under way may have read the copies of before: the measured checks begin after it
      await reconcilesReach(proc, count(await scrape(proc)) + 1, (RESYNC + 120) * 1000);
      result.noop = await measureNoop(ctx, proc, ns);
      // the prune removes every other file of 100 objects: a package of fewer than 200 has none to remove, and its
      // commit would change nothing the package reads (its revision stays: the wait below would never end)
      if (bigPrunedNames(n).size > 0) result.prune = await measurePrune(ctx, proc, ns, n);
    }
    return result;
  } finally {
    await proc.stop();
    await dropFinalizers(client, PS_PATH(ns));
    await deleteNamespace(client, ns).catch(() => undefined);
  }
}

/** Waits for the next two periodic reconciles and reports what each cost. */
async function measureNoop(ctx: BenchContext, proc: Proc, ns: string): Promise<NoopResult> {
  const first = await measurePeriodic(ctx, proc);
  const next = await measurePeriodic(ctx, proc);
  // a requested reconcile takes no shortcut: the cost of a full check (render, plan) of the unchanged package
  const requested = await measurePeriodic(ctx, proc, () => requestReconcile(ctx.harness.client, ns));
  return { ...first, next, requested };
}

async function requestReconcile(client: KubeClient, ns: string): Promise<void> {
  await client.request('PATCH', `${PS_PATH(ns)}/big`, {
    contentType: 'application/merge-patch+json',
    body: { metadata: { annotations: { 'packagesync.io/reconcile-requested-at': `bench-${Date.now()}` } } },
  });
}

/** Waits for the next reconcile (periodic, or the one `start` asks for) and reports what it cost. */
async function measurePeriodic(
  ctx: BenchContext,
  proc: Proc,
  start?: () => Promise<void>,
): Promise<Omit<NoopResult, 'next' | 'requested'>> {
  const text = await scrape(proc);
  const done = count(text);
  const clientBefore = packageSyncRequests(text);
  const durationBefore = durationSum(text);
  const apiBefore = await apiserverRequests(ctx.harness.client);
  await start?.();
  const after = await reconcilesReach(proc, done + 1, (RESYNC + 120) * 1000);
  const apiAfter = await apiserverRequests(ctx.harness.client);
  const client = diff(packageSyncRequests(after), clientBefore);
  const stoppedEarly =
    metricValue(after, 'packagesync_unchanged_checks_total') - metricValue(text, 'packagesync_unchanged_checks_total');
  return {
    seconds: durationSum(after) - durationBefore,
    cpuSeconds: metricValue(after, 'process_cpu_seconds_total') - metricValue(text, 'process_cpu_seconds_total'),
    client,
    writes: writes(client),
    requests: total(client),
    apiserver: diff(apiAfter, apiBefore, { GET: 1 }),
    renders: count(after) - done - stoppedEarly,
  };
}

async function storedInventory(client: KubeClient, ns: string): Promise<BigResult['inventory']> {
  const ps = await new PackageSyncs(client).getStored(ns, 'big');
  const inv = ps?.status?.inventory;
  return {
    entries: inv?.entries.length ?? 0,
    shards: inv?.shards?.length ?? 0,
    count: inv?.count ?? inv?.entries.length ?? 0,
    statusBytes: JSON.stringify(ps?.status ?? {}).length,
  };
}

/**
 * Removes half the package from git (every other file), asks for a reconcile and waits for the new revision to
 * be Ready; then checks what is live against what should be, and the inventory against what is live.
 */
async function measurePrune(ctx: BenchContext, proc: Proc, ns: string, n: number): Promise<PruneResult> {
  const { client } = ctx.harness;
  const syncs = new PackageSyncs(client);
  const sha = await commitBigHalf(ctx.git.big.repo, n);
  const gone = bigPrunedNames(n);
  const before = packageSyncRequests(await scrape(proc));
  const started = performance.now();
  await requestReconcile(client, ns);
  const deadline = Date.now() + 30 * 60_000;
  for (;;) {
    const ps = await syncs.getStored(ns, 'big');
    if (ps && isReady(ps as never) && ps.status?.lastAppliedRevision?.endsWith(sha)) break;
    if (Date.now() > deadline) throw new Error('the prune of half the big package did not finish in 30 minutes');
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (performance.now() - started) / 1000;
  const clientCounts = diff(packageSyncRequests(await scrape(proc)), before);
  const live = await liveNames(client, ns);
  const expected = bigObjects(n)
    .map((d) => (d as { metadata: { name: string } }).metadata.name)
    .filter((name) => !gone.has(name));
  const expectedSet = new Set(expected);
  const ps = (await syncs.get(ns, 'big')) as PackageSync;
  const inventory = new Set(ps.status?.inventory?.entries.map((e) => e.id.split('_')[1]!) ?? []);
  return {
    pruned: gone.size,
    seconds,
    client: clientCounts,
    leftBehind: [...live].filter((name) => gone.has(name)).length,
    wronglyDeleted: expected.filter((name) => !live.has(name)).length,
    inventoryMatchesLive:
      inventory.size === live.size && [...live].every((name) => inventory.has(name) && expectedSet.has(name)),
  };
}

/** Waits until every Deployment in `ns` is Current as kstatus reads it; returns how long that took. */
async function untilDeploymentsCurrent(client: KubeClient, ns: string, timeoutMs = 30 * 60_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    const deployments = await listAll(client, `/apis/apps/v1/namespaces/${ns}/deployments`);
    // a list's items carry no apiVersion and kind
    const typed = deployments.map((d) => ({ ...d, apiVersion: 'apps/v1', kind: 'Deployment' }));
    if (typed.every((d) => computeHealth(d).status === 'Current')) return (performance.now() - started) / 1000;
    if (performance.now() - started > timeoutMs) throw new Error(`the Deployments in ${ns} were not Current in time`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function listAll(client: KubeClient, path: string): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  let next: string | undefined;
  do {
    const page = await client.request<{ items: KubeObject[]; metadata: { continue?: string } }>('GET', path, {
      query: { labelSelector: 'packagesync.io/name=big', limit: 5000, ...(next ? { continue: next } : {}) },
    });
    items.push(...page.items);
    next = page.metadata.continue || undefined;
  } while (next);
  return items;
}

/** The package's objects that exist, by name (ConfigMaps and Deployments carrying its owner label). */
async function liveNames(client: KubeClient, ns: string): Promise<Set<string>> {
  const names = new Set<string>();
  for (const path of [`/api/v1/namespaces/${ns}/configmaps`, `/apis/apps/v1/namespaces/${ns}/deployments`])
    for (const item of await listAll(client, path)) names.add(item.metadata.name);
  return names;
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
