/**
 * `make bench-rollout` / `node bench/rollout.ts`: issue 31's measure. A 4-object package (bench/lib/fixtures.ts
 * fleetUnit) over N targets, two ways, each with a fresh controller on the bench's control plane:
 *
 *   direct             N PackageSyncs created at once (path fleet/u-NNNN each), in the controller's own cluster
 *   direct, kubeConfig the same N PackageSyncs, each reaching the cluster through the kubeconfig Secret the set's
 *                      children use: what a team writes by hand today, one PackageSync per cluster
 *   rollout            one PackageSyncSet stamping the same N PackageSyncs, in 4 waves of 25 % with 0 bake time
 *
 * and for each the time from create to every unit Ready (rollout: the set Succeeded) and the controller's peak
 * RSS. Targets are directories, not clusters: one cluster Secret (this control plane's own kubeconfig) × N
 * directories (spec.generators.directories), since a bench cannot start 100 API servers; each child therefore
 * reaches the cluster through a kubeconfig Secret (as a real fleet does). A PackageSync in a remote cluster waits
 * for health by polling (the shared watches are the controller's own cluster's: docs/adr/0026), one in-cluster by
 * watch; so the like-for-like baseline is "direct, kubeConfig", and the in-cluster run is reported beside it.
 * Issue 31's bar: rollout time ≤ 1.2 × direct, rollout RSS within 10 % of direct.
 *
 *   --targets 100           N (run it small on a shared machine: --targets 20)
 *   --concurrency 8         the controller's --concurrency in every run (default: the controller's own default)
 *   --kubeconfig <path>     use this cluster instead of the bench control plane
 *   --prefix <p>  --port-base <n>   namespace prefix and first of four loopback ports
 *   --out <file>            also write the result as JSON (default bench/.work/rollout-latest.json)
 *
 * For a diagnosis: BENCH_LOG_LEVEL=debug gives each controller that log level (its log: bench/.work/logs/), and
 * BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" passes Node flags to it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { KubeClient } from '../src/adapters/kube/client.ts';
import {
  applyCrds,
  createNamespace,
  deleteNamespace,
  ensureBenchCluster,
  kubectl,
  workDir,
  countingClient,
} from './lib/cluster.ts';
import { commitFleet, startGitFixtures, unitName, unitPath } from './lib/fixtures.ts';
import { dropFinalizers } from './lib/fleet.ts';
import { parseControllerConfig } from '../src/config/controller-config.ts';
import { memoryOf, startPackageSync, waitServing } from './lib/procs.ts';
import { BENCH_LABEL, createAll, isReady, packageSyncOf, PS_PATH, watchUntil } from './lib/units.ts';

/** The controller's own defaults (its --concurrency): the bench runs it as a user does. */
const configDefault = parseControllerConfig({});

const { values: args } = parseArgs({
  options: {
    targets: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: String(configDefault.concurrency) },
    kubeconfig: { type: 'string' },
    prefix: { type: 'string', default: 'bench-' },
    'port-base': { type: 'string', default: '18190' },
    out: { type: 'string', default: resolve(workDir, 'rollout-latest.json') },
  },
});

const log = (msg: string) => console.log(`[bench-rollout ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const SETS_PATH = (ns: string) => `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncsets`;
const TIMEOUT_MS = 20 * 60_000;

interface Run {
  seconds: number;
  peakMiB: number;
  /** The rollout's waves as its status tells them, in seconds from the set's creation. */
  waves?: WaveTiming[];
}

interface WaveTiming {
  name: string;
  /** The wave began (its children pinned), then every target healthy, then the next wave may start. */
  started: number;
  healthy: number;
  completed: number;
}

interface WaveStatusTimes {
  name: string;
  startedAt?: string;
  healthyAt?: string;
  completedAt?: string;
}

const since = (t0: number, at: string | undefined) => (at ? (Date.parse(at) - t0) / 1000 : NaN);

async function measure(
  client: KubeClient,
  kubeconfig: string,
  tag: string,
  port: number,
  body: (ns: string) => Promise<() => Promise<WaveStatusTimes[] | void>>,
): Promise<Run> {
  const ns = `${args.prefix}rollout-${tag}-${Date.now().toString(36)}`;
  await createNamespace(client, ns);
  const proc = startPackageSync({
    kubeconfig,
    concurrency: Number(args.concurrency),
    metricsPort: port,
    tag: `rollout-${tag}`,
    ...(process.env.BENCH_LOG_LEVEL ? { extraArgs: ['--log-level', process.env.BENCH_LOG_LEVEL] } : {}),
    ...(process.env.BENCH_NODE_ARGS ? { nodeArgs: process.env.BENCH_NODE_ARGS.split(' ') } : {}),
  });
  try {
    await waitServing(proc);
    const started = Date.now();
    const done = await body(ns);
    const waves = await done();
    const seconds = (Date.now() - started) / 1000;
    return {
      seconds,
      peakMiB: memoryOf(proc.child.pid!).peakMiB,
      ...(waves
        ? {
            waves: waves.map((w) => ({
              name: w.name,
              started: since(started, w.startedAt),
              healthy: since(started, w.healthyAt),
              completed: since(started, w.completedAt),
            })),
          }
        : {}),
    };
  } finally {
    await proc.stop();
    await dropFinalizers(client, PS_PATH(ns));
    await deleteNamespace(client, ns);
  }
}

const loadNow = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main(): Promise<void> {
  const n = Number(args.targets);
  const loadBefore = loadNow();
  log(`load before: ${loadBefore}`);
  const cluster = args.kubeconfig ? undefined : ensureBenchCluster();
  const kubeconfig = args.kubeconfig ?? cluster!.kubeconfig;
  applyCrds(kubeconfig);
  for (const crd of ['packagesyncs', 'packagesyncsets'])
    kubectl(kubeconfig, 'wait', '--for=condition=Established', `crd/${crd}.packagesync.io`, '--timeout=60s');
  const { client } = await countingClient(kubeconfig);
  const git = await startGitFixtures();
  const port = Number(args['port-base']);
  try {
    await commitFleet(git.fleet.repo, n);
    // the cluster Secret the set's children reach the cluster through (and the kubeConfig baseline's PackageSyncs)
    const clusterSecret = (ns: string) =>
      client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
        body: {
          metadata: { name: 'self', labels: { 'packagesync.io/secret-type': 'cluster' } },
          stringData: { value: readFileSync(kubeconfig, 'utf8') },
        },
      });
    const directRun = (tag: string, viaKubeConfig: boolean, p: number) =>
      measure(client, kubeconfig, tag, p, async (ns) => {
        if (viaKubeConfig) await clusterSecret(ns);
        const ready = watchUntil(client, PS_PATH(ns), n, isReady, TIMEOUT_MS);
        await createAll(
          client,
          Array.from({ length: n }, (_, i) => {
            const body = packageSyncOf(ns, {
              name: unitName(i),
              url: git.fleet.url,
              path: unitPath(i),
              interval: '1h',
              wait: true,
            });
            if (viaKubeConfig) (body.spec as Record<string, unknown>).kubeConfig = { secretRef: { name: 'self' } };
            return { path: PS_PATH(ns), body };
          }),
        );
        return async () => {
          await ready.ready;
          ready.stop();
        };
      });
    log(`direct: ${n} PackageSyncs in the controller's cluster`);
    const inCluster = await directRun('direct', false, port);
    log(`direct: ${inCluster.seconds.toFixed(1)} s, peak RSS ${inCluster.peakMiB.toFixed(0)} MiB`);
    log(`direct, kubeConfig: ${n} PackageSyncs through the cluster Secret, as the set's children`);
    const direct = await directRun('kubeconfig', true, port + 2);
    log(`direct, kubeConfig: ${direct.seconds.toFixed(1)} s, peak RSS ${direct.peakMiB.toFixed(0)} MiB`);

    log(`rollout: one PackageSyncSet over ${n} targets in 4 waves, 0 bake`);
    const rollout = await measure(client, kubeconfig, 'set', port + 1, async (ns) => {
      await clusterSecret(ns);
      await client.request('POST', SETS_PATH(ns), {
        body: {
          apiVersion: 'packagesync.io/v1alpha1',
          kind: 'PackageSyncSet',
          metadata: { name: 'fleet', labels: { [BENCH_LABEL]: 'true' } },
          spec: {
            template: {
              spec: {
                source: { url: git.fleet.url, ref: { branch: 'main' } },
                interval: '1h',
                timeout: '10m',
                prune: true,
                wait: true,
              },
            },
            generators: { clusters: {}, directories: Array.from({ length: n }, (_, i) => unitPath(i)) },
            rollout: {
              // three quarters by percent, the last wave takes the rest; bakeTime defaults to 0
              waves: [
                { name: 'w1', targets: { percent: 25 } },
                { name: 'w2', targets: { percent: 25 } },
                { name: 'w3', targets: { percent: 25 } },
                { name: 'w4' },
              ],
            },
          },
        },
      });
      return async () => {
        const deadline = Date.now() + TIMEOUT_MS;
        for (;;) {
          const set = await client.request<{
            status?: { phase?: string; message?: string; waves?: WaveStatusTimes[] };
          }>('GET', `${SETS_PATH(ns)}/fleet`);
          if (set.status?.phase === 'Succeeded') return set.status.waves ?? [];
          if (set.status?.phase === 'Reverted' || set.status?.phase === 'Holding')
            throw new Error(`the rollout stopped: ${set.status.message}`);
          if (Date.now() > deadline) throw new Error(`the rollout did not finish: ${set.status?.message}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      };
    });
    log(`rollout: ${rollout.seconds.toFixed(1)} s, peak RSS ${rollout.peakMiB.toFixed(0)} MiB`);
    // where the time went: each wave's own work (started → healthy) and the set's step to the next wave
    let previous = 0;
    for (const w of rollout.waves ?? []) {
      log(
        `  wave ${w.name}: started at ${w.started.toFixed(2)} s (+${(w.started - previous).toFixed(2)} after the last), ` +
          `healthy at ${w.healthy.toFixed(2)} s (${(w.healthy - w.started).toFixed(2)} s), completed at ${w.completed.toFixed(2)} s`,
      );
      previous = w.completed;
    }
    const result = {
      targets: n,
      waves: 4,
      bakeSeconds: 0,
      direct,
      directInCluster: inCluster,
      rollout,
      timeRatio: rollout.seconds / direct.seconds,
      rssRatio: rollout.peakMiB / direct.peakMiB,
      timeRatioInCluster: rollout.seconds / inCluster.seconds,
      rssRatioInCluster: rollout.peakMiB / inCluster.peakMiB,
      loadBefore,
      load: loadNow(),
    };
    log(
      `against direct, kubeConfig: time ratio ${result.timeRatio.toFixed(2)} (bar ≤ 1.2), RSS ratio ${result.rssRatio.toFixed(2)} (bar ≤ 1.1); ` +
        `against direct in-cluster: ${result.timeRatioInCluster.toFixed(2)} and ${result.rssRatioInCluster.toFixed(2)}; load ${result.load}`,
    );
    mkdirSync(dirname(args.out), { recursive: true });
    writeFileSync(args.out, JSON.stringify(result, null, 2) + '\n');
  } finally {
    await git.stop();
    cluster?.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
