/**
 * `make bench-ui` / `node bench/ui-fleet.ts`: the web UI at fleet size (issue 28's Measure). N PackageSyncs in
 * five states (status written as a controller would), then the controller run twice on the same fleet — without
 * the UI, and with `--ui-address` and B browsers on the fleet page — measuring:
 *   - server time of the first fleet page (GET /api/packagesyncs as the fleet page asks it, a viewer's bearer
 *     token, once the UI lists the whole fleet): p50/p95/max of 30 requests, each after a status write elsewhere
 *     in the fleet (so the page is computed, not the shared copy), wall time on loopback;
 *   - first contentful paint in headless Chromium, and the time until the table's rows are shown;
 *   - the controller's RSS with the UI on and B browsers connected, against the same fleet without the UI;
 *   - SSE update latency: from a status write of a PackageSync on the first page until each of the B pages shows
 *     it (the write's own round trip, the watch, the event stream, the page's re-read and render).
 * The controller reconciles none of the fleet (its --watch-label-selector matches none of it): the UI keeps its
 * own watch of every PackageSync, so the difference in RSS is the UI's — its cache, its sessions, B streams.
 * B browsers are B contexts of one Chromium (separate cookies, connections and event streams).
 *
 * A measure on a busy machine means little: with a 1-minute load average above 1.5 the run waits up to
 * --quiet-wait seconds, then refuses (exit 3) unless --allow-busy, which measures anyway with the result marked.
 * The load before and after is recorded.
 *
 *   --count 10000  --browsers 20  --writes 5  --kubeconfig <path> (default: the bench's own control plane)
 *   --quiet-wait 120  --allow-busy  --out bench/.work/ui-fleet-latest.json
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import PQueue from 'p-queue';
import type { Page } from 'playwright-core';
import type { KubeClient } from '../src/adapters/kube/client.ts';
import type { FleetPage } from '../src/cli/ui/api-types.ts';
import { UI_ASSETS_DIR } from '../src/cli/ui/command.ts';
import { buildUi } from '../hack/build-ui.ts';
import {
  applyCrds,
  countingClient,
  createNamespace,
  deleteNamespace,
  ensureBenchCluster,
  setWaitForDeletion,
  workDir,
} from './lib/cluster.ts';
import { loadCell, waitQuiet, type LoadBeforeRun } from './lib/machine-load.ts';
import { memoryOf, startPackageSync, waitServing, type Proc } from './lib/procs.ts';
import { PS_PATH } from './lib/units.ts';
import { quantile } from './lib/report.ts';
import { fleetFixture, fleetName, freePort, launchChromium, statusFor, TARGETS, viewerToken } from './lib/ui-fleet.ts';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    browsers: { type: 'string', default: '20' },
    writes: { type: 'string', default: '5' },
    kubeconfig: { type: 'string' },
    'quiet-wait': { type: 'string', default: '120' },
    'allow-busy': { type: 'boolean', default: false },
    settle: { type: 'string', default: '15' },
    out: { type: 'string', default: resolve(workDir, 'ui-fleet-latest.json') },
  },
});
const count = Number(args.count);
const browsers = Number(args.browsers);
const writes = Number(args.writes);
const settleMs = Number(args.settle) * 1000;
const FIRST_PAGE = '?sort=namespace&desc=0&page=1&pageSize=50'; // what web/fleet.tsx asks first

const loadBefore: LoadBeforeRun = await waitQuiet({ maxWaitSeconds: Number(args['quiet-wait']) });
if (!loadBefore.quiet && !args['allow-busy']) {
  console.error(
    `bench/ui-fleet: the 1-minute load average is ${loadBefore.loadAverage1m.toFixed(2)} (> 1.5) after waiting ` +
      `${loadBefore.waitedSeconds} s; stop the other work, or pass --allow-busy to measure anyway (marked)`,
  );
  process.exit(3);
}

const bench = args.kubeconfig ? undefined : ensureBenchCluster();
const kubeconfig = args.kubeconfig ?? bench!.kubeconfig;
applyCrds(kubeconfig);
const { client } = await countingClient(kubeconfig);
const ns = `bench-ui-${Date.now().toString(36)}`;
const procs: Proc[] = [];
let exitCode = 0;
try {
  console.log(`bench/ui-fleet: ${count} PackageSyncs in ${ns}, ${browsers} browsers, load ${loadCell(loadBefore)}`);
  await createNamespace(client, ns);
  await Promise.all([createFleet(client), buildUi(UI_ASSETS_DIR)]);
  const token = await viewerToken(client, ns);

  const rssWithout = await controllerRss(false, async () => undefined);
  let measured: Awaited<ReturnType<typeof measureUi>> | undefined;
  const rssWith = await controllerRss(true, async (uiUrl) => {
    measured = await measureUi(uiUrl, token);
    return measured.closeBrowsers;
  });
  const loadAfter = loadavg()[0] ?? 0;
  const m = measured!;
  const result = {
    at: new Date().toISOString(),
    count,
    browsers,
    cores: availableParallelism(),
    loadBefore,
    loadAfter1m: loadAfter,
    serverFirstPageMs: m.server,
    browserMs: m.browser,
    rssMiB: { withoutUi: rssWithout, withUi: rssWith, delta: rssWith.rssMiB - rssWithout.rssMiB },
    sseLatencyMs: m.sse,
  };
  mkdirSync(dirname(args.out), { recursive: true });
  writeFileSync(args.out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(report(result));
  console.log(`written: ${args.out}`);
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  await Promise.all(procs.map((p) => p.stop()));
  setWaitForDeletion(false);
  await deleteNamespace(client, ns);
  await client.close();
  bench?.stop();
}
process.exit(exitCode);

async function createFleet(kube: KubeClient): Promise<void> {
  const q = new PQueue({ concurrency: 32 });
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      q.add(async () => {
        const ps = fleetFixture(ns, i);
        await kube.request('POST', PS_PATH(ns), { body: ps });
        await kube.request('PATCH', `${PS_PATH(ns)}/${ps.metadata.name}/status`, {
          contentType: 'application/merge-patch+json',
          body: { status: statusFor(i) },
        });
      }),
    ),
  );
}

/**
 * Starts the controller (with the UI or not) on the fleet, runs `during` once it serves, lets it settle and
 * reads its RSS while what `during` left open (the browsers) is still connected; then stops everything.
 */
async function controllerRss(
  withUi: boolean,
  during: (uiUrl: string) => Promise<(() => Promise<void>) | undefined>,
): Promise<{ rssMiB: number; peakMiB: number }> {
  const [metricsPort, uiPort] = await Promise.all([freePort(), freePort()]);
  const proc = startPackageSync({
    kubeconfig,
    concurrency: 4,
    metricsPort,
    tag: withUi ? 'ui-on' : 'ui-off',
    extraArgs: withUi ? ['--ui-address', `127.0.0.1:${uiPort}`] : [],
  });
  procs.push(proc);
  try {
    await waitServing(proc, 120_000);
    const close = await during(`http://127.0.0.1:${uiPort}/`);
    await new Promise((r) => setTimeout(r, settleMs));
    const memory = memoryOf(proc.child.pid!);
    await close?.();
    return memory;
  } finally {
    await proc.stop();
  }
}

async function measureUi(url: string, token: string) {
  const headers = { authorization: `Bearer ${token}` };
  // the UI's watch has the whole fleet once the first page counts it all
  const deadline = Date.now() + 300_000;
  for (;;) {
    const res = await fetch(`${url}api/packagesyncs${FIRST_PAGE}`, { headers }).catch(() => undefined);
    if (res?.ok && ((await res.json()) as FleetPage).total === count) break;
    if (Date.now() > deadline) throw new Error(`the UI did not list ${count} PackageSyncs within 5 minutes`);
    await new Promise((r) => setTimeout(r, 500));
  }
  // each request after a status write elsewhere in the fleet: the server computes the page (its pages are shared
  // only until the next change), so this is the computed page's time, not a cached answer's
  const times: number[] = [];
  for (let i = 0; i < 30; i++) {
    const other = count - 1 - i;
    await client.request('PATCH', `${PS_PATH(ns)}/${fleetName(other)}/status`, {
      contentType: 'application/merge-patch+json',
      body: { status: statusFor(other, `bench change ${i} ${Date.now()}`) },
    });
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    const res = await fetch(`${url}api/packagesyncs${FIRST_PAGE}`, { headers });
    await res.arrayBuffer();
    times.push(performance.now() - t0);
  }
  const server = { p50: quantile(times, 0.5), p95: quantile(times, 0.95), max: Math.max(...times) };

  const chromium = await launchChromium();
  const open = async (): Promise<Page> => {
    const context = await chromium.newContext({ viewport: { width: 1280, height: 800 }, extraHTTPHeaders: headers });
    const page = await context.newPage();
    await page.goto(url);
    await page.locator('table.fleet tbody tr').first().waitFor({ timeout: 60_000 });
    return page;
  };
  const paints: { fcp: number; rows: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const page = await open();
    paints.push(
      await page.evaluate(() => ({
        fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1,
        rows: performance.now(),
      })),
    );
    await page.context().close();
  }
  const browser = {
    firstContentfulPaint: quantile(
      paints.map((p) => p.fcp),
      0.5,
    ),
    rowsShownAtMost: Math.max(...paints.map((p) => p.rows)),
  };

  const pages: Page[] = [];
  for (let i = 0; i < browsers; i++) pages.push(await open());
  const first = (await pages[0]!.locator('table.fleet tbody tr').first().getAttribute('data-name'))!;
  const latencies: number[] = [];
  for (let k = 0; k < writes; k++) {
    const marker = `bench write ${k} ${Date.now()}`;
    await Promise.all(pages.map((p) => p.evaluate(watchRow(first, marker))));
    const t0 = Date.now();
    await client.request('PATCH', `${PS_PATH(ns)}/${first}/status`, {
      contentType: 'application/merge-patch+json',
      body: { status: statusFor(k % 2 === 0 ? 1 : 0, marker) },
    });
    const seen = await Promise.all(pages.map((p) => p.evaluate<number>('window.benchSeen')));
    latencies.push(...seen.map((at) => at - t0));
    await new Promise((r) => setTimeout(r, 500));
  }
  const sse = { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), max: Math.max(...latencies) };
  return { server, browser, sse, closeBrowsers: () => chromium.close() };
}

/** In the page: window.benchSeen resolves with Date.now() once the row's message cell reads `marker`. */
function watchRow(name: string, marker: string): string {
  return `
  window.benchSeen = new Promise((resolve, reject) => {
    const cell = ${JSON.stringify(`tr[data-name="${name}"] td.message`)};
    const seen = () =>
      document.querySelector(cell)?.textContent === ${JSON.stringify(marker)} && (resolve(Date.now()), true);
    const observer = new MutationObserver(() => seen() && observer.disconnect());
    observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    setTimeout(() => (observer.disconnect(), reject(new Error('not shown in 30 s'))), 30_000);
  });
  0`;
}

function report(r: {
  count: number;
  browsers: number;
  cores: number;
  loadBefore: LoadBeforeRun;
  loadAfter1m: number;
  serverFirstPageMs: { p50: number; p95: number; max: number };
  browserMs: { firstContentfulPaint: number; rowsShownAtMost: number };
  rssMiB: { withoutUi: { rssMiB: number }; withUi: { rssMiB: number }; delta: number };
  sseLatencyMs: { p50: number; p95: number; max: number };
}): string {
  const ms = (n: number) => `${n.toFixed(0)} ms`;
  const row = (what: string, figure: string, target: string, ok: boolean) =>
    `| ${what} | ${figure} | ${target} | ${ok ? 'yes' : 'NO'} |`;
  return [
    `### The web UI with ${r.count} PackageSyncs, ${r.browsers} browsers (${r.cores} cores; load before ` +
      `${loadCell(r.loadBefore)}, after ${r.loadAfter1m.toFixed(2)})`,
    '',
    '| measure | figure | target | met |',
    '|---|---|---|---|',
    row(
      'server time, first fleet page (p50 / p95 / max)',
      `${ms(r.serverFirstPageMs.p50)} / ${ms(r.serverFirstPageMs.p95)} / ${ms(r.serverFirstPageMs.max)}`,
      `≤ ${TARGETS.serverMs} ms`,
      r.serverFirstPageMs.p95 <= TARGETS.serverMs,
    ),
    row(
      'first contentful paint (p50 of 3); rows shown (max)',
      `${ms(r.browserMs.firstContentfulPaint)}; ${ms(r.browserMs.rowsShownAtMost)}`,
      `≤ ${TARGETS.paintMs} ms`,
      r.browserMs.firstContentfulPaint <= TARGETS.paintMs,
    ),
    row(
      `controller RSS, UI on + ${r.browsers} browsers − without`,
      `${r.rssMiB.withUi.rssMiB.toFixed(0)} − ${r.rssMiB.withoutUi.rssMiB.toFixed(0)} = ${r.rssMiB.delta.toFixed(0)} MiB`,
      `≤ ${TARGETS.rssDeltaMiB} MiB`,
      r.rssMiB.delta <= TARGETS.rssDeltaMiB,
    ),
    row(
      `status write → shown in ${r.browsers} pages (p50 / p95 / max)`,
      `${ms(r.sseLatencyMs.p50)} / ${ms(r.sseLatencyMs.p95)} / ${ms(r.sseLatencyMs.max)}`,
      `≤ ${TARGETS.sseMs} ms`,
      r.sseLatencyMs.max <= TARGETS.sseMs,
    ),
  ].join('\n');
}
