/** Renders bench/RESULTS.md from one run's figures: machine, versions, every figure, each ratio vs target. */
import type { BigResult } from './big.ts';
import { total, verbs, writes } from './cluster.ts';
import type { FleetResult } from './fleet.ts';
import type { LatencyResult } from './latency.ts';
import { renderScale, scaleTargets } from './report-scale.ts';
import { renderWall } from './report-wall.ts';
import type { FleetFloorResult } from './fleet-floor.ts';
import { loadCell, QUIET_LOAD } from './machine-load.ts';
import { helmTargets, renderHelmFleet } from './report-helm.ts';
import { byProcess, footprintNote } from './report-memory.ts';

export interface Results {
  date: string;
  quick: boolean;
  machine: Record<string, string>;
  versions: Record<string, string>;
  settings: Record<string, string>;
  fleet: FleetResult[];
  /** The kustomize fleet (issue 13): absent in results written before it existed. */
  kfleet?: FleetResult[];
  /** PackageSync on the kustomize fleet's objects as plain YAML: the kustomize fleet's baseline (absent before session 21). */
  kfleetPlain?: FleetResult[];
  /** The Helm fleet (issue 27): absent in results written before it existed. */
  hfleet?: FleetResult[];
  big: BigResult[];
  /** The API server's floor for the fleet (fleet-floor.ts): absent in results written before it existed. */
  fleetFloor?: FleetFloorResult[];
  latency?: LatencyResult;
  /** Sections taken over from an earlier run (--merge), said so in the report. */
  merged?: string;
  /** Hand-written sections kept across runs (what each change bought), appended verbatim. */
  history?: string;
}

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
/** A capped run's time is a lower bound: "> 600.0 (412/1000 Ready)". */
const secs = (x: FleetResult) =>
  x.readyAtCap !== undefined ? `> ${f1(x.seconds)} (${x.readyAtCap}/${x.n} Ready at the cap)` : f1(x.seconds);
const mark = (ok: boolean | undefined) => (ok === undefined ? '❔ not shown' : ok ? '✅ met' : '❌ missed');

function renderKustomizeFleet(rows: FleetResult[], line: (s?: string) => void): void {
  line('## 1b. Kustomize fleet: N overlays over one shared base, both tools run kustomize');
  line();
  line('Each unit is a kustomize overlay (`kfleet/u-NNNN`: namePrefix, labels into selectors, a configMapGenerator');
  line('whose hashed name the Deployment’s reference follows, an image tag) over one base, in the same repository');
  line('as the plain fleet: four objects per unit, built by the pinned kustomize (PackageSync: its render workers;');
  line('Flux: kustomize-controller’s embedded kustomize, which it runs on every reconcile). Its baseline is');
  line('PackageSync on the same objects as plain YAML (`kplain/u-NNNN`: what the pinned `kustomize build` gives for');
  line('each overlay), run just before it: the targets’ “plain fleet of the same objects”. Then a');
  line('requested resync with nothing changed: every unit gets its tool’s reconcile-request annotation');
  line('(`packagesync.io/reconcile-requested-at`, `reconcile.fluxcd.io/requestedAt`), timed until every');
  line('status.lastHandledReconcileAt says it was handled. A requested reconcile is not the periodic one: PackageSync');
  line('then re-applies every object (a request means “now, whatever the cache thinks”), while its periodic resync');
  line('of an unchanged, healthy package applies nothing (section 3); Flux builds and dry-run-applies every time.');
  line('Either way the render cache spares PackageSync the kustomize run. Render time per reconcile =');
  line('packagesync_render_tool_seconds_total / runs over the cold');
  line('sync; a render-cache hit runs no subprocess (packagesync_render_cache_hits_total). Flux has no render');
  line('metric: its whole reconcile time (controller_runtime_reconcile_time_seconds) is shown instead.');
  line();
  line(
    '| N | tool | time to all Ready (s) | peak RSS (MiB) | kustomize runs (cold) | render per run (ms) | requested resync (s) | reconciles | per reconcile (ms) | kustomize runs / cache hits (resync) | writes (resync) | load before (1 min) |',
  );
  line('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const x of rows) {
    const r = x.render;
    const cold =
      r?.coldToolRuns !== undefined
        ? `${r.coldToolRuns} | ${r.coldToolRuns ? f1((1000 * (r.coldToolSeconds ?? 0)) / r.coldToolRuns) : '—'}`
        : 'every reconcile (no cache) | —';
    const resync = r
      ? `${f1(r.resyncSeconds)} | ${r.resyncReconciles} | ${f1(1000 * r.resyncSecondsPerReconcile)} | ${
          r.resyncToolRuns !== undefined ? `${r.resyncToolRuns} / ${r.resyncCacheHits}` : `${r.resyncReconciles} / 0`
        } | ${r.resyncWrites}`
      : 'not measured (capped) | — | — | — | —';
    line(`| ${x.n} | ${x.tool} | ${secs(x)} | ${f1(x.peakMiB)} | ${cold} | ${resync} | ${loadCell(x.load)} |`);
  }
  line();
}

export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

export function renderResults(r: Results): string {
  const out: string[] = [];
  const line = (s = '') => out.push(s);
  line('# PackageSync benchmarks');
  line();
  line(`Generated by \`make bench\` (\`node bench/run.ts${r.quick ? ' --quick' : ''}\`) on ${r.date}.`);
  if (r.merged) line(`Merged: ${r.merged} (\`--merge\`).`);
  if (r.quick) line('**Quick run: small sizes, not the issue’s shapes — for checking the harness only.**');
  line('Every figure comes from one run on this machine (rows merged from an earlier run are named above);');
  line('ratios compare runs on the same control plane.');
  line();
  line('## Machine and versions');
  line();
  line('| | |');
  line('|---|---|');
  for (const [k, v] of Object.entries({ ...r.machine, ...r.versions, ...r.settings })) line(`| ${k} | ${v} |`);
  line();

  const targets = [...summary(r), ...scaleTargets(r.fleet), ...helmTargets(r.hfleet ?? [])];
  line('## Targets (issues 7, 18 and 27)');
  line();
  line('| measure | target | measured | |');
  line('|---|---|---|---|');
  for (const t of targets) line(`| ${t.measure} | ${t.target} | ${t.measured} | ${mark(t.ok)} |`);
  line();

  line('## 1. Fleet: N units × 4 objects (ServiceAccount, Service, Deployment 0 replicas, ConfigMap), wait on');
  line();
  line('Time from the first create to all N Ready (observedGeneration current). Peak RSS = VmHWM of every');
  line('process of the tool (Flux: source-controller + kustomize-controller). API requests: the API server’s');
  line('`apiserver_request_total` delta by verb over the window, minus the harness’s own (creates, one LIST);');
  line('it includes what kube-controller-manager, the scheduler and kwok do in reaction (ReplicaSets, Endpoints…).');
  line('"client" is the controller’s own count (packagesync_api_requests_total; Flux: rest_client_requests_total).');
  line(
    `Load before: the machine’s 1-minute load average when the run started (marked above ${QUIET_LOAD}: not quiet).`,
  );
  line();
  line(
    '| N | tool | time (s) | units/s | peak RSS (MiB) | API server requests | by verb | controller’s own requests | load before (1 min) |',
  );
  line('|---|---|---|---|---|---|---|---|---|---|');
  for (const x of r.fleet) {
    line(
      `| ${x.n} | ${x.tool} | ${secs(x)} | ${x.readyAtCap !== undefined ? `< ${f1(x.n / x.seconds)}` : f1(x.n / x.seconds)} | ${f1(x.peakMiB)}${x.tool === 'Flux' ? ` (${byProcess(x.perProcessPeakMiB)})` : ''} | ${total(x.apiserver)} | ${verbs(x.apiserver)} | ${total(x.client)} (${verbs(x.client)}) | ${loadCell(x.load)} |`,
    );
  }
  line();
  const ns = [...new Set(r.fleet.map((x) => x.n))];
  if (r.fleet.some((x) => x.tool === 'Flux')) {
    line('| N | time PackageSync / Flux | peak RSS PackageSync / Flux | API server requests PackageSync / Flux |');
    line('|---|---|---|---|');
    for (const n of ns) {
      const p = r.fleet.find((x) => x.n === n && x.tool === 'PackageSync');
      const fx = r.fleet.find((x) => x.n === n && x.tool === 'Flux');
      if (!p || !fx) continue;
      const capped = fx.readyAtCap !== undefined ? '< ' : '';
      line(
        `| ${n} | ${capped}${f2(p.seconds / fx.seconds)}× | ${capped}${f2(p.peakMiB / fx.peakMiB)}× | ${f2(total(p.apiserver) / total(fx.apiserver))}×${capped ? ' (Flux stopped at the cap)' : ''} |`,
      );
    }
    line();
  }

  if (r.kfleet?.length) renderKustomizeFleet(r.kfleet, line);
  renderHelmFleet(r.hfleet ?? [], line);
  renderScale(r.fleet, line);
  renderWall(r.fleet, r.fleetFloor ?? [], line);

  line('## 2. Big package: cold apply vs the floor');
  line();
  line('Floor: `bench/lib/floor.ts`, one server-side apply PATCH per object, 32 in flight over one keep-alive');
  line('undici Pool, bodies serialised beforehand, nothing else. PackageSync: creation → Ready with `wait: false`');
  line('(git fetch, render, plan, inventory, apply, status included). 3 ConfigMaps : 1 Deployment (0 replicas).');
  line();
  line(
    '| objects | floor (s) | floor obj/s | PackageSync (s) | PackageSync obj/s | ratio | peak RSS (MiB) | controller’s requests |',
  );
  line('|---|---|---|---|---|---|---|---|');
  for (const b of r.big)
    line(
      `| ${b.n} | ${f1(b.floorSeconds)} | ${Math.round(b.n / b.floorSeconds)} | ${f1(b.seconds)} | ${Math.round(b.n / b.seconds)} | ${f2(b.seconds / b.floorSeconds)}× | ${f1(b.peakMiB)} | ${total(b.client)} (${verbs(b.client)}) |`,
    );
  line();

  line('## 3. No-op resync');
  line();
  line('The next periodic reconcile of the big package after it is Ready and at rest (every Deployment Current:');
  line('kube-controller-manager has stopped writing their status), nothing changed in git or cluster. "at rest after"');
  line('= seconds from Ready until then.');
  line('Time = that reconcile’s duration (packagesync_reconcile_duration_seconds); CPU = the controller’s over the');
  line('window (process_cpu_seconds_total); requests = the controller’s own. "requested": then a requested reconcile');
  line(
    'of the same unchanged package, which takes no shortcut (render, from its cache; plan) and writes the request’s answer.',
  );
  line();
  line(
    '| objects | at rest after (s) | time (s) | CPU (s) | requests | writes | renders | requests per 100 objects | by verb | API server delta (all clients) |',
  );
  line('|---|---|---|---|---|---|---|---|---|---|');
  for (const b of r.big)
    if (b.noop)
      line(
        `| ${b.n} | ${b.atRestSeconds === undefined ? '–' : f1(b.atRestSeconds)} | ${f2(b.noop.seconds)} | ${b.noop.cpuSeconds === undefined ? '–' : f2(b.noop.cpuSeconds)} | ${b.noop.requests} | ${b.noop.writes} | ${b.noop.renders ?? '–'}${b.noop.next ? `, then ${b.noop.next.renders ?? '–'} (next check: ${b.noop.next.writes} writes, ${b.noop.next.requests} requests)` : ''} | ${f2((100 * b.noop.requests) / b.n)} | ${verbs(b.noop.client)} | ${total(b.noop.apiserver)} (writes ${writes(b.noop.apiserver)}: ${verbs(b.noop.apiserver)}) |`,
      );
  for (const b of r.big)
    if (b.noop?.requested) {
      const q = b.noop.requested;
      line(
        `| ${b.n}, requested (full check) | – | ${f2(q.seconds)} | ${q.cpuSeconds === undefined ? '–' : f2(q.cpuSeconds)} | ${q.requests} | ${q.writes} | ${q.renders ?? '–'} | ${f2((100 * q.requests) / b.n)} | ${verbs(q.client)} | ${total(q.apiserver)} (writes ${writes(q.apiserver)}: ${verbs(q.apiserver)}) |`,
      );
    }
  line();

  if (r.big.some((b) => b.prune || b.inventory)) {
    line('### Inventory storage and the prune of half the package');
    line();
    line('Past 4,000 objects the inventory moves from status into shard ConfigMaps (docs/adr/0027). Prune: every');
    line('other file of the package removed from git, a reconcile requested, until Ready at that revision; then');
    line('live objects vs expected, and the inventory (read through the controller’s reader) vs live.');
    line();
    line(
      '| objects | inventory stored as | status (KiB) | pruned | prune time (s) | requests | left behind | wrongly deleted | inventory = live |',
    );
    line('|---|---|---|---|---|---|---|---|---|---|');
    for (const b of r.big) {
      const inv = b.inventory;
      const where = !inv ? '—' : inv.shards ? `${inv.shards} shards, ${inv.count} objects` : `${inv.entries} entries`;
      const kib = inv ? f1(inv.statusBytes / 1024) : '—';
      const p = b.prune;
      line(
        p
          ? `| ${b.n} | ${where} | ${kib} | ${p.pruned} | ${f1(p.seconds)} | ${total(p.client)} (${verbs(p.client)}) | ${p.leftBehind} | ${p.wronglyDeleted} | ${p.inventoryMatchesLive ? 'yes' : '**no**'} |`
          : `| ${b.n} | ${where} | ${kib} | — | — | — | — | — | — |`,
      );
    }
    line();
  }

  if (r.latency) {
    const l = r.latency;
    line('## 4. Change latency: commit → applied, 10 objects');
    line();
    line('From the commit landing in the bare repository to all 10 ConfigMaps carrying the new revision (polled');
    line('every 20 ms). Polling: spec.interval ' + `${l.pollIntervalSeconds}s, commits at a random phase. Webhook:`);
    line('a GitHub-style push (X-Hub-Signature-256) sent right after the commit, spec.interval 10m.');
    line();
    line('| trigger | samples | p50 (s) | p90 (s) | max (s) | all (s) |');
    line('|---|---|---|---|---|---|');
    for (const [name, xs] of [
      [`polling (${l.pollIntervalSeconds}s)`, l.polling],
      ['webhook', l.webhook],
    ] as const)
      line(
        `| ${name} | ${xs.length} | ${f2(quantile(xs, 0.5))} | ${f2(quantile(xs, 0.9))} | ${f2(Math.max(...xs))} | ${xs.map(f2).join(', ')} |`,
      );
    line();
  }

  const idle = r.fleet.filter((x) => x.idleMiB !== undefined);
  if (idle.length) {
    line('## 5. Idle memory');
    line();
    line('| tool | PackageSyncs / units | idle after (s) | RSS now (MiB) |');
    line('|---|---|---|---|');
    for (const x of idle) line(`| ${x.tool} | ${x.n} | ${x.idleSeconds} | ${f1(x.idleMiB!)} |`);
    line();
  }
  if (r.history) line(r.history.trim());
  return out.join('\n') + '\n';
}

export interface Target {
  measure: string;
  target: string;
  measured: string;
  ok?: boolean;
}

/**
 * Issue 27's bars for the kustomize fleet at its largest size: time to all Ready against the plain fleet of the
 * same objects in the same run and against Flux's kustomize-controller, and the peak RSS of the controller and its
 * render workers together.
 */
export function kustomizeTargets(r: Results): Target[] {
  const ps = (r.kfleet ?? []).filter((x) => x.tool === 'PackageSync');
  const k = ps.reduce<FleetResult | undefined>((a, x) => (!a || x.n > a.n ? x : a), undefined);
  if (!k) return [];
  const out: Target[] = [];
  // the same objects as plain YAML; results before session 21 have only fleet/'s units, whose objects differ
  const same = r.kfleetPlain?.find((x) => x.n === k.n);
  const plain = same ?? r.fleet.find((x) => x.tool === 'PackageSync' && x.n === k.n);
  out.push({
    measure: `kustomize fleet ${k.n}: time to all Ready`,
    target: '≤ 1.15× the plain fleet of the same objects',
    measured: plain
      ? `${f1(k.seconds)} s vs ${f1(plain.seconds)} s = ${f2(k.seconds / plain.seconds)}×${same ? '' : " (the plain fleet's own objects)"}`
      : 'plain fleet not run',
    ok: plain ? k.seconds / plain.seconds <= 1.15 : undefined,
  });
  const fx = r.kfleet?.find((x) => x.tool === 'Flux' && x.n === k.n);
  out.push({
    measure: `kustomize fleet ${k.n}: time to all Ready`,
    target: '≤ 0.2× Flux kustomize-controller',
    measured: fx
      ? `${f1(k.seconds)} s vs ${secs(fx)} = ${fx.readyAtCap !== undefined ? '< ' : ''}${f2(k.seconds / fx.seconds)}×`
      : 'Flux not run',
    ok: fx ? (k.seconds / fx.seconds <= 0.2 ? true : fx.readyAtCap !== undefined ? undefined : false) : undefined,
  });
  out.push({
    measure: `kustomize fleet ${k.n}: peak RSS, controller + render workers`,
    target: '≤ 250 MiB',
    measured: `${f1(k.peakMiB)} MiB (${byProcess(k.perProcessPeakMiB)})${footprintNote(k)}`,
    ok: k.peakMiB <= 250,
  });
  return out;
}

function summary(r: Results): Target[] {
  // issue 7's ratios at the largest fleet both tools ran (Flux stays the anchor at 1,000 while PackageSync goes on)
  const withFlux = r.fleet.filter((x) => x.tool === 'Flux' && r.fleet.some((y) => y.n === x.n && y.tool !== 'Flux'));
  const maxN = Math.max(0, ...(withFlux.length ? withFlux : r.fleet).map((x) => x.n));
  const p = r.fleet.find((x) => x.n === maxN && x.tool === 'PackageSync');
  const fx = r.fleet.find((x) => x.n === maxN && x.tool === 'Flux');
  const big = r.big.at(-1);
  const out: Target[] = [];
  const both = p && fx;
  out.push({
    measure: `fleet ${maxN}: time to all Ready`,
    target: '≤ 0.25× Flux',
    measured: both
      ? `${f1(p.seconds)} s vs ${secs(fx)} = ${fx.readyAtCap !== undefined ? '< ' : ''}${f2(p.seconds / fx.seconds)}×`
      : 'Flux not run',
    // a capped Flux time makes the ratio an upper bound: conclusive only when that bound meets the target
    ok: both ? (p.seconds / fx.seconds <= 0.25 ? true : fx.readyAtCap !== undefined ? undefined : false) : undefined,
  });
  out.push({
    measure: `fleet ${maxN}: controller peak RSS`,
    target: '≤ 0.7× Flux',
    measured: both
      ? `${f1(p.peakMiB)} MiB vs ${f1(fx.peakMiB)} MiB = ${f2(p.peakMiB / fx.peakMiB)}×${fx.readyAtCap !== undefined ? ` (Flux had only ${fx.readyAtCap} units at the cap: its peak is a lower bound, the ratio an upper one)` : ''}`
      : 'Flux not run',
    ok: both ? (p.peakMiB / fx.peakMiB <= 0.7 ? true : fx.readyAtCap !== undefined ? undefined : false) : undefined,
  });
  out.push(...kustomizeTargets(r));
  if (big) {
    const ratio = big.seconds / big.floorSeconds;
    out.push({
      measure: `big package ${big.n}: cold apply`,
      target: '≤ 1.5× the floor',
      measured: `${f1(big.seconds)} s vs ${f1(big.floorSeconds)} s = ${f2(ratio)}×`,
      ok: ratio <= 1.5,
    });
  }
  const noop = r.big.filter((b) => b.noop).at(-1);
  if (noop?.noop) {
    const per100 = (100 * noop.noop.requests) / noop.n;
    out.push({
      measure: `no-op resync ${noop.n}`,
      target: '0 writes, ≤ 1 request per 100 objects',
      measured: `${noop.noop.writes} writes, ${noop.noop.requests} requests = ${f2(per100)} per 100, ${f2(noop.noop.seconds)} s; the check after it: ${noop.noop.next?.writes ?? '–'} writes, ${noop.noop.next?.renders ?? '–'} renders`,
      ok:
        noop.noop.writes === 0 &&
        per100 <= 1 &&
        (noop.noop.next?.writes ?? 0) === 0 &&
        (noop.noop.next?.renders ?? 0) === 0,
    });
  }
  if (r.latency) {
    const p50 = quantile(r.latency.webhook, 0.5);
    out.push({
      measure: 'commit → applied with webhook, 10 objects',
      target: 'p50 ≤ 1 s',
      measured: `p50 ${f2(p50)} s`,
      ok: p50 <= 1,
    });
  }
  return out;
}
