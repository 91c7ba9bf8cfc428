/**
 * `make bench-notify` / `node bench/notify.ts`: issue 29's Measure. The same fleet twice on the bench's own
 * control plane, each with a fresh controller: first without notifications, then with a generic webhook Notifier
 * (every phase, HMAC-signed CloudEvents, to a loopback HTTPS receiver) on every unit. Reports
 * - the fleet's time from creation to all Ready, both ways, and the ratio (the issue: within 5 %);
 * - each record message's delivery latency: received at the receiver − the CloudEvent's `time` (when the
 *   controller saw the transition), p50/p99/max (the issue: p99 within 5 s), plus duplicates (by id) and messages
 *   out of order per unit;
 * - the outbox's bound: the largest queue depth and oldest-undelivered age the controller's metrics showed
 *   (sampled every 500 ms), messages dropped, and the controller's peak RSS both ways.
 * A Notifier selects `--per-notifier` units (a team's namespace share), as the rate limit is per Notifier.
 *
 *   --units 1000            fleet size (run it SMALL on a shared machine: --units 50)
 *   --per-notifier 10       units each Notifier selects
 *   --kubeconfig <path>     use this cluster instead of the bench control plane
 *   --prefix <p>  --port-base <n>   namespace prefix and first of four loopback ports
 *   --concurrency 10        the controller's --concurrency
 *   --out <file>            the result as JSON (default bench/.work/notify-latest.json)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  apiserverFleetWrites,
  applyCrds,
  countingClient,
  createNamespace,
  deleteNamespace,
  diff,
  ensureBenchCluster,
  kubectl,
  metricValue,
  workDir,
  type VerbCounts,
} from './lib/cluster.ts';
import { commitFleet, startGitFixtures, unitName, unitPath } from './lib/fixtures.ts';
import { dropFinalizers } from './lib/fleet.ts';
import { memoryOf, packageSyncRequests, scrape, startPackageSync, waitServing } from './lib/procs.ts';
import { cpuSeconds } from './lib/steady.ts';
import { BENCH_LABEL, createAll, isReady, packageSyncOf, PS_PATH, watchUntil } from './lib/units.ts';
import { startNotifyReceiver, type NotifyReceiver } from '../test/support/notify-receiver.ts';
import { notifierCollectionPath } from '../src/controller/notify/notify-controller.ts';
import type { KubeClient } from '../src/adapters/kube/client.ts';

const { values: args } = parseArgs({
  options: {
    units: { type: 'string', default: '1000' },
    'per-notifier': { type: 'string', default: '10' },
    kubeconfig: { type: 'string' },
    prefix: { type: 'string', default: 'bench-' },
    'port-base': { type: 'string', default: '18090' },
    concurrency: { type: 'string', default: '10' },
    out: { type: 'string', default: resolve(workDir, 'notify-latest.json') },
  },
});

const KEY = 'bench-notify-hmac-key';
const GROUP_LABEL = 'bench.packagesync.io/notify-group';
const PHASES = ['started', 'applied', 'healthy'];
const log = (msg: string) => console.log(`[bench-notify ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted: readonly number[], p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

interface RunFigures {
  notifications: boolean;
  readySeconds: number;
  peakMiB: number;
  maxQueueDepth: number;
  maxOldestUndeliveredSeconds: number;
  dropped: number;
  /** The controller's own CPU and API requests over the run (process_cpu_seconds_total, by verb). */
  controllerCpuSeconds: number;
  controllerRequests: VerbCounts;
  /** The API server's writes, all clients, from creation to all Ready, by verb and resource. */
  apiserverWrites: VerbCounts;
}

const groupOf = (i: number, per: number) => `g-${String(Math.floor(i / per)).padStart(4, '0')}`;

async function createNotifiers(client: KubeClient, ns: string, receiver: NotifyReceiver, groups: string[]) {
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'hook', namespace: ns },
      stringData: { token: KEY, 'ca.crt': receiver.ca },
    },
  });
  await createAll(
    client,
    groups.map((g) => ({
      path: notifierCollectionPath(ns),
      body: {
        apiVersion: 'packagesync.io/v1alpha1',
        kind: 'Notifier',
        // the bench controller watches only the harness's label (--watch-label-selector), Notifiers included
        metadata: { name: g, namespace: ns, labels: { [BENCH_LABEL]: 'true' } },
        spec: {
          type: 'generic',
          address: `${receiver.url}/${ns}/${g}`,
          secretRef: { name: 'hook' },
          selector: { matchLabels: { [GROUP_LABEL]: g } },
        },
      },
    })),
  );
}

async function runFleet(
  client: KubeClient,
  kubeconfig: string,
  fleetUrl: string,
  n: number,
  per: number,
  receiver: NotifyReceiver | undefined,
): Promise<RunFigures> {
  const mode = receiver ? 'on' : 'off';
  const ns = `${args.prefix}notify-${mode}-${n}-${Date.now().toString(36)}`;
  await createNamespace(client, ns);
  const groups = [...new Set(Array.from({ length: n }, (_, i) => groupOf(i, per)))];
  if (receiver) await createNotifiers(client, ns, receiver, groups);
  const proc = startPackageSync({
    kubeconfig,
    concurrency: Number(args.concurrency),
    metricsPort: Number(args['port-base']) + 3,
    tag: `notify-${mode}`,
  });
  let maxQueueDepth = 0;
  let maxOldest = 0;
  let sampling = true;
  try {
    await waitServing(proc);
    const sampler = (async () => {
      while (sampling) {
        const m = await scrape(proc).catch(() => '');
        maxQueueDepth = Math.max(maxQueueDepth, metricValue(m, 'packagesync_notifications_queue_depth'));
        maxOldest = Math.max(maxOldest, metricValue(m, 'packagesync_notifications_oldest_undelivered_seconds'));
        await sleep(500);
      }
    })();
    const ready = watchUntil(client, PS_PATH(ns), n, isReady, 30 * 60_000);
    const writesBefore = await apiserverFleetWrites(client);
    const t0 = performance.now();
    await createAll(
      client,
      Array.from({ length: n }, (_, i) => {
        const body = packageSyncOf(ns, {
          name: unitName(i),
          url: fleetUrl,
          path: unitPath(i),
          interval: '10m',
          wait: true,
        });
        body.metadata.labels = { ...body.metadata.labels, [GROUP_LABEL]: groupOf(i, per) };
        return { path: PS_PATH(ns), body };
      }),
    );
    const readySeconds = ((await ready.ready) - t0) / 1000;
    ready.stop();
    const apiserverWrites = diff(await apiserverFleetWrites(client), writesBefore);
    log(`${mode}: ${n} Ready in ${readySeconds.toFixed(1)} s`);
    if (receiver) {
      // every unit's record ends healthy: wait for its message (bounded: the bench reports what arrived)
      const deadline = Date.now() + 120_000;
      const healthy = () =>
        receiver.requests.filter((r) => r.path.startsWith(`/${ns}/`) && r.json.type?.endsWith('.healthy'));
      while (healthy().length < n && Date.now() < deadline) await sleep(250);
      await sleep(1_000);
    }
    sampling = false;
    await sampler;
    const metrics = await scrape(proc);
    return {
      notifications: !!receiver,
      readySeconds,
      peakMiB: memoryOf(proc.child.pid!).peakMiB,
      maxQueueDepth,
      maxOldestUndeliveredSeconds: maxOldest,
      dropped: metricValue(metrics, 'packagesync_notifications_total', 'result="dropped"'),
      controllerCpuSeconds: cpuSeconds(metrics),
      controllerRequests: packageSyncRequests(metrics),
      apiserverWrites,
    };
  } finally {
    sampling = false;
    await proc.stop();
    await dropFinalizers(client, PS_PATH(ns));
    await deleteNamespace(client, ns).catch(() => undefined);
  }
}

/** Latency, duplicates and order of what the receiver got for the "on" fleet. */
function deliveries(receiver: NotifyReceiver, n: number) {
  const got = receiver.requests.filter((r) => r.answered === 200 && r.json.specversion === '1.0');
  const latencies = got.map((r) => (r.at - Date.parse(String(r.json.time))) / 1000).sort((a, b) => a - b);
  const ids = got.map((r) => r.json.id);
  const byUnit = new Map<string, string[]>();
  for (const r of got) {
    const unit = `${String(r.json.source)}`;
    byUnit.set(unit, [...(byUnit.get(unit) ?? []), String(r.json.type).replace('io.packagesync.deployment.', '')]);
  }
  const outOfOrder = [...byUnit.values()].filter((kinds) => {
    const idx = kinds.map((k) => PHASES.indexOf(k));
    return idx.some((v, i) => i > 0 && v < idx[i - 1]!);
  }).length;
  return {
    messages: got.length,
    unitsHealthy: [...byUnit.values()].filter((k) => k.includes('healthy')).length,
    expectedUnits: n,
    duplicates: ids.length - new Set(ids).size,
    badSignatures: got.filter((r) => !r.signatureValid).length,
    outOfOrderUnits: outOfOrder,
    latencySeconds: {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? NaN,
    },
  };
}

async function main(): Promise<void> {
  const n = Number(args.units);
  const per = Number(args['per-notifier']);
  const cluster = args.kubeconfig ? undefined : ensureBenchCluster();
  const kubeconfig = args.kubeconfig ?? cluster!.kubeconfig;
  applyCrds(kubeconfig);
  for (const crd of ['packagesyncs', 'notifiers'])
    kubectl(kubeconfig, 'wait', '--for=condition=Established', `crd/${crd}.packagesync.io`, '--timeout=60s');
  const { client } = await countingClient(kubeconfig);
  const git = await startGitFixtures();
  const receiver = await startNotifyReceiver({ hmacKey: KEY });
  try {
    await commitFleet(git.fleet.repo, n);
    log(`fleet of ${n}, a Notifier per ${per} units (${Math.ceil(n / per)} Notifiers) in the "on" run`);
    const off = await runFleet(client, kubeconfig, git.fleet.url, n, per, undefined);
    const on = await runFleet(client, kubeconfig, git.fleet.url, n, per, receiver);
    const d = deliveries(receiver, n);
    const result = {
      at: new Date().toISOString(),
      units: n,
      perNotifier: per,
      concurrency: Number(args.concurrency),
      off,
      on,
      readyRatio: on.readySeconds / off.readySeconds,
      deliveries: d,
    };
    mkdirSync(workDir, { recursive: true });
    writeFileSync(args.out, JSON.stringify(result, null, 2) + '\n');
    log(
      `all Ready: ${off.readySeconds.toFixed(1)} s without, ${on.readySeconds.toFixed(1)} s with notifications ` +
        `(×${result.readyRatio.toFixed(3)}); delivery p50 ${d.latencySeconds.p50.toFixed(2)} s, ` +
        `p99 ${d.latencySeconds.p99.toFixed(2)} s, max ${d.latencySeconds.max.toFixed(2)} s over ${d.messages} ` +
        `messages (${d.unitsHealthy}/${n} units healthy delivered, ${d.duplicates} duplicates, ` +
        `${d.outOfOrderUnits} units out of order, ${d.badSignatures} bad signatures); outbox max depth ` +
        `${on.maxQueueDepth}, oldest ${on.maxOldestUndeliveredSeconds.toFixed(1)} s, ${on.dropped} dropped; ` +
        `peak RSS ${off.peakMiB.toFixed(0)} → ${on.peakMiB.toFixed(0)} MiB; controller CPU ` +
        `${off.controllerCpuSeconds.toFixed(1)} → ${on.controllerCpuSeconds.toFixed(1)} s; written to ${args.out}`,
    );
    for (const r of [off, on])
      log(`  ${r.notifications ? 'on' : 'off'}: API server writes to Ready ${JSON.stringify(r.apiserverWrites)}`);
  } finally {
    await receiver.close();
    await git.stop();
    cluster?.stop();
  }
}

await main();
