/**
 * `make bench-drift` / `node bench/drift.ts`: self-heal latency (issue 16 item 2). A 10-ConfigMap package is
 * applied with `interval: 1h`; then, N times, another field manager edits a field the package sets (what
 * `kubectl edit` sends: a patch as manager kubectl-edit), and the time until the controller has put it back
 * is measured from the edit's response to the first read that sees the package's value again (reads every
 * 20 ms). Edits are spaced by the controller's --drift-check-min-interval (5 s), so each one is checked at
 * once rather than at the end of a rate-limit window. Runs on the bench's own control plane (started when
 * down), in well under 2 minutes with the defaults.
 *
 *   --samples 12            edits to measure
 *   --kubeconfig <path>     use this cluster instead of the bench control plane
 *   --prefix <p>  --port-base <n>   namespace prefix and first of four loopback ports
 *   --out <file>            also write the result as JSON (default bench/.work/drift-latest.json)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  applyCrds,
  countingClient,
  createNamespace,
  deleteNamespace,
  ensureBenchCluster,
  kubectl,
  workDir,
} from './lib/cluster.ts';
import { CHANGE_OBJECTS, CHANGE_PATH, commitChange, startGitFixtures } from './lib/fixtures.ts';
import { dropFinalizers } from './lib/fleet.ts';
import { scrape, startPackageSync, waitServing } from './lib/procs.ts';
import { createAll, isReady, packageSyncOf, PS_PATH, watchUntil } from './lib/units.ts';

const { values: args } = parseArgs({
  options: {
    samples: { type: 'string', default: '12' },
    kubeconfig: { type: 'string' },
    prefix: { type: 'string', default: 'bench-' },
    'port-base': { type: 'string', default: '18090' },
    out: { type: 'string', default: resolve(workDir, 'drift-latest.json') },
  },
});

/** The controller's default --drift-check-min-interval, and a margin. */
const SPACING_MS = 5_000 + 300;
const log = (msg: string) => console.log(`[bench-drift ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const samples = Number(args.samples);
  // the bench control plane, stopped at the end only when started here
  const cluster = args.kubeconfig ? undefined : ensureBenchCluster();
  const kubeconfig = args.kubeconfig ?? cluster!.kubeconfig;
  applyCrds(kubeconfig);
  kubectl(kubeconfig, 'wait', '--for=condition=Established', 'crd/packagesyncs.packagesync.io', '--timeout=60s');
  const { client } = await countingClient(kubeconfig);
  const git = await startGitFixtures();
  const ns = `${args.prefix}drift-${Date.now().toString(36)}`;
  await createNamespace(client, ns);
  const proc = startPackageSync({
    kubeconfig,
    concurrency: 4,
    metricsPort: Number(args['port-base']) + 3,
    tag: 'drift',
  });
  const cmPath = (i: number) => `/api/v1/namespaces/${ns}/configmaps/cm-${i}`;
  try {
    await commitChange(git.change.repo, 1);
    await waitServing(proc);
    const ready = watchUntil(client, PS_PATH(ns), 1, isReady, 120_000);
    await createAll(client, [
      {
        path: PS_PATH(ns),
        body: packageSyncOf(ns, { name: 'drift', url: git.change.url, path: CHANGE_PATH, interval: '1h', wait: true }),
      },
    ]);
    await ready.ready;
    ready.stop();
    log(`package applied; ${samples} edits, ${SPACING_MS / 1000} s apart`);

    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) {
      const path = cmPath(i % CHANGE_OBJECTS);
      await client.request('PATCH', path, {
        query: { fieldManager: 'kubectl-edit' },
        contentType: 'application/merge-patch+json',
        body: { data: { rev: `edited-${i}` } },
      });
      const t0 = performance.now();
      for (;;) {
        const cm = await client.request<{ data?: { rev?: string } }>('GET', path);
        if (cm.data?.rev === '1') break;
        if (performance.now() - t0 > 60_000) throw new Error(`edit ${i} not corrected within 60 s`);
        await sleep(20);
      }
      latencies.push((performance.now() - t0) / 1000);
      await sleep(SPACING_MS);
    }
    const metrics = await scrape(proc);
    const counter = (name: string) =>
      Number(/^(\S+) (\S+)$/m.exec(metrics.split('\n').find((l) => l.startsWith(`${name} `)) ?? '')?.[2] ?? NaN);
    const sorted = [...latencies].sort((a, b) => a - b);
    const result = {
      at: new Date().toISOString(),
      samples,
      p50: percentile(sorted, 50),
      p95: percentile(sorted, 95),
      max: sorted[sorted.length - 1],
      latencies,
      driftChecks: counter('packagesync_drift_checks_total'),
      driftCorrected: counter('packagesync_drift_corrected_objects_total'),
    };
    mkdirSync(workDir, { recursive: true });
    writeFileSync(args.out, JSON.stringify(result, null, 2) + '\n');
    log(
      `edit → corrected over ${samples} edits: p50 ${result.p50.toFixed(2)} s, p95 ${result.p95.toFixed(2)} s, ` +
        `max ${result.max!.toFixed(2)} s; ${result.driftChecks} checks, ${result.driftCorrected} objects corrected`,
    );
  } finally {
    await proc.stop();
    await dropFinalizers(client, PS_PATH(ns));
    await deleteNamespace(client, ns).catch(() => undefined);
    await git.stop();
    cluster?.stop();
  }
}

await main();
