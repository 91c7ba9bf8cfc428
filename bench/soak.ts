/**
 * `make bench-soak` / `node bench/soak.ts`: the churn soak of issue 18 item 6. N PackageSyncs (the fleet's four
 * objects each) follow one repository on the bench's loopback git server; for --duration the harness commits
 * every --commit-every (some units' content changes, extra objects come and go), creates and deletes units at
 * random every --churn-every, and SIGKILLs the controller (run with --leader-elect) every --kill-every, then
 * starts it again and times how long until the new process holds the leader Lease. Through the run: the
 * controller's RSS, the git cache's size on disk, reconcile results. At the end, after the last changes
 * settle: no orphaned object, no wrong delete, every inventory equal to its live objects, every unit Ready at
 * its latest revision (lib/soak-check.ts). Any violation is listed by name and the run exits 1.
 *
 *   --duration 60m  --units 500  --kill-every 10m  --commit-every 1m  --churn-every 30s  --interval 5m
 *   --kubeconfig <path>       use this cluster instead of the bench control plane
 *   --git-cache-max-bytes <n> the controller's bound (default 64 MiB: small enough to be reached in an hour)
 *   --settle 10m              longest wait for the last changes before the checks
 *   --warmup 2m               the start of each lifetime left out of its RSS slope (the cold sync's climb)
 *   --takeover-max 45         seconds: a slower takeover after SIGKILL is a violation (Lease: 15 s)
 *   --seed 1  --concurrency 10  --prefix soak-  --metrics-port 0 (a free one)  --out bench/RESULTS-soak.md
 *   --machine-note "<what else ran>"  said in the report's machine table (the load average is measured anyway)
 *   --heap-snapshots 2m,12m   V8 heap snapshots of the controller at these times after the churn starts (node's
 *                             --heapsnapshot-signal=SIGUSR2; files in bench/.work/heap/, compare them with
 *                             bench/heap-summary.ts). Off by default: a snapshot stops the process for seconds.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { durationMs } from '../src/api/packagesync.ts';
import { diskUsage } from '../src/adapters/git/evict.ts';
import { Informer } from '../src/adapters/kube/informer.ts';
import { inventoryId } from '../src/core/inventory.ts';
import { refOf, type KubeObject } from '../src/core/object.ts';
import {
  applyCrds,
  countingClient,
  createNamespace,
  deleteNamespace,
  ensureBenchCluster,
  kubectl,
  metricValue,
  root,
  workDir,
} from './lib/cluster.ts';
import { startGitFixtures, unitName, unitPath } from './lib/fixtures.ts';
import { dropFinalizers, removeLeftovers } from './lib/fleet.ts';
import { gitCacheDir, memoryOf, scrape, startPackageSync, waitServing, type Proc } from './lib/procs.ts';
import { checkSoak, describe, type Violation } from './lib/soak-check.ts';
import { contentOf, seededRandom, SoakRepo } from './lib/soak-fixture.ts';
import { renderSoak, type Lifetime, type SoakResult } from './lib/soak-report.ts';
import { afterWarmup, pooledSlopeMiBPerHour, slopeMiBPerHour } from './lib/soak-stats.ts';
import { createAll, isReady, packageSyncOf, PS_PATH, watchUntil } from './lib/units.ts';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '60m' },
    units: { type: 'string', default: '500' },
    kubeconfig: { type: 'string' },
    'kill-every': { type: 'string', default: '10m' },
    'commit-every': { type: 'string', default: '1m' },
    'churn-every': { type: 'string', default: '30s' },
    interval: { type: 'string', default: '5m' },
    'git-cache-max-bytes': { type: 'string', default: String(64 << 20) },
    settle: { type: 'string', default: '10m' },
    warmup: { type: 'string', default: '2m' },
    'takeover-max': { type: 'string', default: '45' },
    seed: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '10' },
    prefix: { type: 'string', default: 'soak-' },
    'metrics-port': { type: 'string', default: '0' },
    'machine-note': { type: 'string' },
    out: { type: 'string', default: resolve(root, 'bench/RESULTS-soak.md') },
    'heap-snapshots': { type: 'string' },
  },
});

const log = (msg: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const N = Number(args.units);
const churnMs = durationMs(args.duration);
const killEveryMs = durationMs(args['kill-every']);
const commitEveryMs = durationMs(args['commit-every']);
const churnEveryMs = durationMs(args['churn-every']);
const settleMs = durationMs(args.settle);
const warmupS = durationMs(args.warmup) / 1000;
const cacheBound = Number(args['git-cache-max-bytes']);
const takeoverMax = Number(args['takeover-max']);
const random = seededRandom(Number(args.seed));
const TAG = 'soak';
const heapSnapshotsAt = (args['heap-snapshots'] ?? '')
  .split(',')
  .filter(Boolean)
  .map((d) => durationMs(d) / 1000);
const heapDir = resolve(workDir, 'heap');

async function main(): Promise<number> {
  mkdirSync(workDir, { recursive: true });
  const cluster = args.kubeconfig ? undefined : ensureBenchCluster();
  const kubeconfig = args.kubeconfig ?? cluster!.kubeconfig;
  applyCrds(kubeconfig);
  kubectl(kubeconfig, 'wait', '--for=condition=Established', 'crd/packagesyncs.packagesync.io', '--timeout=60s');
  const { client } = await countingClient(kubeconfig);
  await removeLeftovers(client, args.prefix);
  const ns = `${args.prefix}${Date.now().toString(36)}`;
  await createNamespace(client, ns);
  const git = await startGitFixtures();
  // the pool the churn creates from: at most two units per tick
  const pool = 2 * Math.ceil(churnMs / churnEveryMs) + 10;
  const repo = new SoakRepo(git.fleet.repo, ns);
  await repo.init(N + pool);
  log(`namespace ${ns}; ${N} units, a pool of ${pool} for churn; repository ${git.fleet.url}`);

  rmSync(gitCacheDir(TAG), { recursive: true, force: true });
  const metricsPort = Number(args['metrics-port']) || (await freePort());
  const lifetimes: Lifetime[] = [];
  const t0 = { at: performance.now() }; // reset when the churn starts: lifetimes are timed from there
  const now = () => (performance.now() - t0.at) / 1000;
  let proc: Proc | undefined;
  const start = (index: number): Proc => {
    const p = startPackageSync({
      kubeconfig,
      concurrency: Number(args.concurrency),
      metricsPort,
      tag: `${TAG}-${index}`,
      sharedCache: TAG,
      nodeArgs: heapSnapshotsAt.length ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapDir}`] : [],
      extraArgs: ['--leader-elect', '--leader-election-namespace', ns, '--git-cache-max-bytes', String(cacheBound)],
    });
    lifetimes.push({
      index,
      startT: now(),
      endT: now(),
      end: 'end of run',
      samples: [],
      peakMiB: 0,
      reconciles: { success: 0, failure: 0 },
    });
    return p;
  };
  const recordReconciles = async () => {
    if (!proc) return;
    const text = await scrape(proc).catch(() => undefined);
    if (!text) return;
    lifetimes.at(-1)!.reconciles = {
      success: metricValue(text, 'packagesync_reconcile_total', 'result="success"'),
      failure: metricValue(text, 'packagesync_reconcile_total', 'result="failure"'),
    };
  };

  // Ready=False transitions, by reason: the errors users would see, whatever process made them
  const readyFalseByReason: Record<string, number> = {};
  const lastReady = new Map<string, string>();
  const informer = new Informer(client, { path: PS_PATH(ns) });
  informer.on((event, o) => {
    if (event === 'delete') return void lastReady.delete(o.metadata.name);
    const c = conditionOf(o, 'Ready');
    const key = `${c?.status}/${c?.reason}`;
    if (c?.status === 'False' && lastReady.get(o.metadata.name) !== key)
      readyFalseByReason[c.reason ?? 'unknown'] = (readyFalseByReason[c.reason ?? 'unknown'] ?? 0) + 1;
    lastReady.set(o.metadata.name, key);
  });
  informer.start();

  const live = new Set<number>(Array.from({ length: N }, (_, i) => i));
  const deleted: string[] = [];
  let nextIndex = N;
  const counts = { commits: 0, contentChanges: 0, extrasAdded: 0, extrasRemoved: 0, created: 0, deleted: 0 };
  const load: number[] = [];
  const cache = { max: 0, final: 0, over: 0, samples: 0 };
  let coldSyncSeconds: number;
  let settleSeconds: number;
  let violations: Violation[];
  const stopping = { now: false };
  const loops: Promise<void>[] = [];
  const every = (ms: number, fn: () => Promise<void>) =>
    loops.push(
      (async () => {
        while (!stopping.now) {
          const next = performance.now() + ms;
          try {
            await fn();
          } catch (e) {
            log(`harness step failed (continuing): ${String(e)}`);
          }
          while (!stopping.now && performance.now() < next)
            await sleep(Math.max(0, Math.min(1000, next - performance.now())));
        }
      })(),
    );
  const sampleCache = async () => {
    const bytes = await diskUsage(gitCacheDir(TAG));
    cache.max = Math.max(cache.max, bytes);
    cache.final = bytes;
    cache.samples++;
    if (bytes > cacheBound) cache.over++;
  };

  if (heapSnapshotsAt.length) mkdirSync(heapDir, { recursive: true });
  try {
    proc = start(1);
    await waitServing(proc);
    every(10_000, async () => {
      load.push(loadavg()[0]!);
      const pid = proc?.child.pid;
      if (!pid || proc!.child.exitCode !== null || proc!.child.signalCode !== null) return;
      const m = memoryOf(pid);
      const l = lifetimes.at(-1)!;
      l.samples.push({ t: now(), rssMiB: m.rssMiB, heapUsedMiB: await heapUsedMiB(proc!) });
      l.peakMiB = Math.max(l.peakMiB, m.peakMiB);
    });
    every(30_000, sampleCache);
    every(30_000, recordReconciles);

    const ready = watchUntil(client, PS_PATH(ns), N, isReady, 30 * 60_000);
    const coldStart = performance.now();
    await createAll(
      client,
      [...live].map((i) => ({ path: PS_PATH(ns), body: unitOf(ns, i, git.fleet.url) })),
    );
    await ready.ready;
    ready.stop();
    coldSyncSeconds = (performance.now() - coldStart) / 1000;
    log(`cold sync: ${N} Ready in ${coldSyncSeconds.toFixed(0)} s; churn for ${args.duration}`);

    // the churn: lifetimes and samples are timed from here (the cold sync's are negative)
    const shift = (performance.now() - t0.at) / 1000;
    t0.at = performance.now();
    for (const l of lifetimes) {
      l.startT -= shift;
      for (const s of l.samples) s.t -= shift;
    }
    const churnEnd = performance.now() + churnMs;
    if (heapSnapshotsAt.length) {
      const pending = [...heapSnapshotsAt];
      every(1000, async () => {
        if (pending.length === 0 || now() < pending[0]!) return;
        pending.shift();
        const pid = proc?.child.pid;
        if (!pid || proc!.child.exitCode !== null) return;
        log(`heap snapshot of pid ${pid} at ${now().toFixed(0)} s (RSS ${memoryOf(pid).rssMiB.toFixed(0)} MiB)`);
        proc!.child.kill('SIGUSR2');
      });
    }
    every(commitEveryMs, async () => {
      if (performance.now() >= churnEnd) return;
      const c = await repo.change([...live], random);
      counts.commits++;
      counts.contentChanges += c.contentChanges;
      counts.extrasAdded += c.extrasAdded;
      counts.extrasRemoved += c.extrasRemoved;
    });
    every(churnEveryMs, async () => {
      if (performance.now() >= churnEnd) return;
      let dels = Math.floor(random() * 3);
      let adds = Math.floor(random() * 3);
      if (live.size < N - 5) adds++;
      if (live.size > N + 5) dels++;
      for (let k = 0; k < dels && live.size > 0; k++) {
        const victims = [...live];
        const i = victims[Math.floor(random() * victims.length)]!;
        live.delete(i);
        deleted.push(unitName(i));
        counts.deleted++;
        await client.request('DELETE', `${PS_PATH(ns)}/${unitName(i)}`);
      }
      for (let k = 0; k < adds && nextIndex < repo.size; k++) {
        const i = nextIndex++;
        live.add(i);
        counts.created++;
        await client.request('POST', PS_PATH(ns), { body: unitOf(ns, i, git.fleet.url) });
      }
    });

    let killAt = performance.now() + killEveryMs;
    while (performance.now() < churnEnd) {
      await sleep(1000);
      if (performance.now() < killAt || churnEnd - performance.now() < 30_000) continue;
      killAt += killEveryMs;
      await recordReconciles();
      const before = await leaseHolder(client, ns);
      const old = proc;
      const exited = new Promise<void>((r) => old.child.once('exit', () => r()));
      const killedAt = performance.now();
      old.child.kill('SIGKILL');
      await exited;
      const l = lifetimes.at(-1)!;
      l.end = 'SIGKILL';
      l.endT = now();
      proc = start(l.index + 1);
      await waitServing(proc);
      for (;;) {
        const holder = await leaseHolder(client, ns);
        if (holder && holder !== before) break;
        if (performance.now() - killedAt > 5 * 60_000) throw new Error('no new leader 5 minutes after SIGKILL');
        await sleep(250);
      }
      const takeover = (performance.now() - killedAt) / 1000;
      lifetimes.at(-1)!.takeoverSeconds = takeover;
      log(`SIGKILL lifetime ${l.index} (peak ${l.peakMiB.toFixed(0)} MiB); new leader after ${takeover.toFixed(1)} s`);
    }

    log(`churn over: ${counts.commits} commits, ${counts.created} created, ${counts.deleted} deleted; settling`);
    stopping.now = true;
    await Promise.all(loops);
    loops.length = 0;
    stopping.now = false;
    every(10_000, async () => {
      const pid = proc?.child.pid;
      if (pid && proc!.child.exitCode === null) {
        const m = memoryOf(pid);
        const l = lifetimes.at(-1)!;
        l.samples.push({ t: now(), rssMiB: m.rssMiB, heapUsedMiB: await heapUsedMiB(proc!) });
        l.peakMiB = Math.max(l.peakMiB, m.peakMiB);
      }
      load.push(loadavg()[0]!);
    });
    every(30_000, sampleCache);
    const settleStart = performance.now();
    for (;;) {
      violations = checkSoak(await gather(client, ns, repo, live, deleted));
      if (violations.length === 0 || performance.now() - settleStart > settleMs) break;
      await sleep(10_000);
    }
    settleSeconds = (performance.now() - settleStart) / 1000;
    await recordReconciles();
    lifetimes.at(-1)!.endT = now();
  } finally {
    stopping.now = true;
    await Promise.all(loops);
    informer.stop();
    await proc?.stop();
    await sampleCache().catch(() => undefined);
    await dropFinalizers(client, PS_PATH(ns));
    await deleteNamespace(client, ns).catch(() => undefined);
    await git.stop();
    await client.close();
    cluster?.stop();
  }

  for (const l of lifetimes) {
    l.slopeMiBPerHour = slopeMiBPerHour(afterWarmup(l.samples, l.startT, warmupS));
    l.heapSlopeMiBPerHour = slopeMiBPerHour(afterWarmup(l.samples, l.startT, warmupS), 'heapUsedMiB');
  }
  for (const l of lifetimes.slice(1))
    if (l.takeoverSeconds !== undefined && l.takeoverSeconds > takeoverMax)
      violations.push({
        kind: 'not-ready',
        unit: `controller lifetime ${l.index}`,
        detail: `took the leader Lease ${l.takeoverSeconds.toFixed(1)} s after SIGKILL (> ${takeoverMax} s)`,
      });
  const result: SoakResult = {
    date: new Date().toISOString(),
    command: `node bench/soak.ts ${process.argv.slice(2).join(' ')}`.trim(),
    settings: {
      units: String(N),
      'PackageSync interval': args.interval,
      'commit every': args['commit-every'],
      'create/delete every': `${args['churn-every']} (0–2 of each, seed ${args.seed})`,
      'SIGKILL every': args['kill-every'],
      'controller flags': `--leader-elect --concurrency ${args.concurrency} --git-cache-max-bytes ${cacheBound}`,
      'RSS warm-up left out': args.warmup,
      cluster: args.kubeconfig ?? 'bench control plane (bench/.work/cluster, own ports)',
      PackageSync: revision(),
      Node: process.version,
    },
    machine: {
      CPU: `${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}`,
      memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
      kernel: release(),
      // said by whoever runs it (the load average below is measured either way)
      ...(args['machine-note'] ? { 'shared machine': args['machine-note'] } : {}),
    },
    churnSeconds: churnMs / 1000,
    coldSyncSeconds,
    settleSeconds,
    commits: counts.commits,
    contentChanges: counts.contentChanges,
    extrasAdded: counts.extrasAdded,
    extrasRemoved: counts.extrasRemoved,
    unitsCreated: counts.created,
    unitsDeleted: counts.deleted,
    liveUnitsAtEnd: live.size,
    lifetimes,
    pooledSlopeMiBPerHour: pooledSlopeMiBPerHour(lifetimes.map((l) => afterWarmup(l.samples, l.startT, warmupS))),
    load: {
      mean1m: load.reduce((a, b) => a + b, 0) / Math.max(1, load.length),
      max1m: Math.max(0, ...load),
      samples: load.length,
    },
    gitCache: {
      maxBytes: cache.max,
      finalBytes: cache.final,
      boundBytes: cacheBound,
      overBoundSamples: cache.over,
      samples: cache.samples,
    },
    readyFalseByReason,
    takeoverMaxSeconds: takeoverMax,
    violations,
  };
  writeFileSync(resolve(workDir, `soak-${Date.now()}.json`), JSON.stringify(result, null, 2));
  writeFileSync(args.out, renderSoak(result));
  log(`wrote ${args.out}`);
  for (const v of violations) console.error(describe(v));
  log(violations.length ? `${violations.length} violations` : 'no violations');
  return violations.length ? 1 : 0;
}

/** V8's used heap from the controller's own metrics (prom-client's default metrics), MiB; RSS minus this is
 * what V8 reserved but does not use, plus native memory. */
async function heapUsedMiB(p: Proc): Promise<number | undefined> {
  const text = await scrape(p).catch(() => undefined);
  const v = text && /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1];
  return v ? Number(v) / 2 ** 20 : undefined;
}

/** A loopback port nobody listens on now (the controller's /metrics; every restart reuses it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

function unitOf(ns: string, i: number, url: string): KubeObject {
  return packageSyncOf(ns, { name: unitName(i), url, path: unitPath(i), interval: args.interval, wait: true });
}

function conditionOf(o: KubeObject, type: string): { status: string; reason?: string; message?: string } | undefined {
  const conditions = (o.status as { conditions?: { type: string; status: string; reason?: string }[] } | undefined)
    ?.conditions;
  return conditions?.find((c) => c.type === type);
}

async function leaseHolder(client: Awaited<ReturnType<typeof countingClient>>['client'], ns: string) {
  const list = await client.request<{ items: { spec?: { holderIdentity?: string } }[] }>(
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`,
  );
  return list.items[0]?.spec?.holderIdentity || undefined;
}

const KINDS = [
  { path: 'api/v1', plural: 'serviceaccounts' },
  { path: 'api/v1', plural: 'services' },
  { path: 'api/v1', plural: 'configmaps' },
  { path: 'apis/apps/v1', plural: 'deployments' },
];

/** What the cluster holds at the end: the PackageSyncs and every object labelled as ours in the namespace. */
async function gather(
  client: Awaited<ReturnType<typeof countingClient>>['client'],
  ns: string,
  repo: SoakRepo,
  live: ReadonlySet<number>,
  deleted: readonly string[],
) {
  const units = (await client.request<{ items: KubeObject[] }>('GET', PS_PATH(ns))).items.map((o) => {
    const s = o.status as
      | { inventory?: { entries: { id: string }[] }; observedGeneration?: number; lastAppliedRevision?: string }
      | undefined;
    const ready = conditionOf(o, 'Ready');
    return {
      name: o.metadata.name,
      inventory: (s?.inventory?.entries ?? []).map((e) => e.id),
      ready: ready?.status === 'True',
      readyReason: ready ? `${ready.reason}: ${(ready.message ?? '').slice(0, 160)}` : undefined,
      generation: o.metadata.generation ?? 0,
      observedGeneration: s?.observedGeneration,
      lastAppliedRevision: s?.lastAppliedRevision,
      deleting: !!o.metadata.deletionTimestamp,
    };
  });
  const objects = [];
  for (const k of KINDS) {
    const list = await client.request<{ items: KubeObject[] }>('GET', `/${k.path}/namespaces/${ns}/${k.plural}`, {
      query: { labelSelector: 'packagesync.io/name' },
    });
    const [group, kind] = k.path === 'apis/apps/v1' ? ['apps', 'Deployment'] : ['', kindOf(k.plural)];
    for (const o of list.items) {
      const withKind = { ...o, apiVersion: group ? `${group}/v1` : 'v1', kind };
      objects.push({
        id: inventoryId(refOf(withKind)),
        owner: o.metadata.labels!['packagesync.io/name']!,
        content: kind === 'ConfigMap' ? contentOf((o as { data?: Record<string, string> }).data) : undefined,
      });
    }
  }
  return {
    expected: [...live].map((i) => repo.expected(i)),
    units,
    deleted,
    live: objects,
  };
}

const kindOf = (plural: string) =>
  ({ serviceaccounts: 'ServiceAccount', services: 'Service', configmaps: 'ConfigMap' })[plural]!;

function revision(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).trim();
    return dirty ? `${sha} + uncommitted changes` : sha;
  } catch {
    return 'unknown';
  }
}

main().then(
  (code) => (process.exitCode = code),
  (e: unknown) => {
    console.error(e);
    process.exitCode = 2;
  },
);
