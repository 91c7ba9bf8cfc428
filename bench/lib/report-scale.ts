/** The fleet at scale (issue 18.1–2): per-unit costs, the fleet at rest, and a restart — rendered for RESULTS.md. */
import { total, verbs } from './cluster.ts';
import type { FleetResult } from './fleet.ts';
import type { RestartFigures } from './steady.ts';

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);

export interface ScaleTarget {
  measure: string;
  target: string;
  measured: string;
  ok?: boolean;
}

export function renderScale(fleet: readonly FleetResult[], line: (s?: string) => void): void {
  const rows = fleet.filter((x) => x.cpuSeconds !== undefined);
  if (rows.length === 0) return;
  line('## 1c. The fleet per unit, at rest, and after a restart (issue 18)');
  line();
  line('Per unit over the cold sync (creation → all Ready): the controller’s CPU seconds');
  line('(`process_cpu_seconds_total`, both controllers for Flux) and its own API requests by verb.');
  line();
  line('| N | tool | time (s) | CPU s per unit | controller requests per unit | by verb per unit |');
  line('|---|---|---|---|---|---|');
  for (const x of rows)
    line(
      `| ${x.n} | ${x.tool} | ${f1(x.seconds)}${x.readyAtCap !== undefined ? ` (capped: ${x.readyAtCap} Ready)` : ''} | ${f2(x.cpuSeconds! / (x.readyAtCap ?? x.n))} | ${f2(total(x.client) / (x.readyAtCap ?? x.n))} | ${verbs(x.client, x.readyAtCap ?? x.n)} |`,
    );
  line();
  const idle = rows.filter((x) => x.idle);
  if (idle.length) {
    line('At rest: every unit Ready, `interval: 10m` (±5 % jitter), nothing changing; the controller’s CPU as a');
    line('share of one core and its own requests over the window, which starts "rested" seconds after the last unit');
    line('was Ready (one interval or more: every unit’s first periodic check, a full one, is behind it, and the');
    line('window holds the checks a fleet at rest gets, those that stop before rendering: ADR 0031).');
    line();
    line(
      '| N | rested (s) | window (s) | RSS (MiB) | CPU (% of a core) | requests/s | requests by verb | reconciles (unchanged; drift checks) |',
    );
    line('|---|---|---|---|---|---|---|---|');
    for (const x of idle) {
      const i = x.idle!;
      line(
        `| ${x.n} | ${i.warmupSeconds ?? 0} | ${f1(i.seconds)} | ${f1(i.rssMiB)} | ${f2(i.cpuPercent)} | ${f2(i.requestsPerSecond)} | ${verbs(i.requests)} | ${i.reconciles ?? '—'} (${i.unchangedChecks ?? '—'}${i.stoppedBeforeLoad === undefined ? '' : `, ${i.stoppedBeforeLoad} before loading`}; ${i.driftChecks ?? '—'}) |`,
      );
    }
    line();
  }
  const restarted = rows.filter((x) => x.restart);
  if (restarted.length) {
    line('Restart: the controller SIGKILLed and started again (a cold process, an empty git cache). Time until it');
    line(
      'has reconciled every unit once; its writes meanwhile (POST/PUT/PATCH/DELETE by its own count, access reviews',
    );
    line('left out: applies, status and finalizer patches, events; nothing changed, so the target is 0) and, in');
    line('brackets, any the API server counted to the fleet’s kinds, PackageSyncs and events from any client; its own');
    line('requests (its other POSTs are access reviews), peak per');
    line('second (over 5 s samples) and mean. "CPU per check" =');
    line('the CPU after start over the reconciles (it includes the first LIST of every watch: an upper bound); at');
    line('rest, each unit is checked once per `interval`, so N × that / 600 s is what a 10 m interval would cost if');
    line('every check were a full one; a check that finds nothing changed stops before rendering (ADR 0031): the');
    line('at-rest row above measures those.');
    line();
    line(
      '| N | to every unit checked (s) | of which start (s) | reconciles | writes | requests | peak req/s | mean req/s | CPU (s) | CPU per check (ms) | every 10 m in full (% of a core) | peak RSS (MiB) |',
    );
    line('|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const x of restarted) {
      const r = x.restart!;
      line(
        `| ${x.n} | ${f1(r.seconds)} | ${f1(r.startSeconds)} | ${r.reconciles} | ${r.writes}${r.writes ? ` (${verbs(r.writesByResource)})` : ''} | ${total(r.requests)} (${verbs(r.requests)}) | ${r.peakRequestsPerSecond} | ${f1(r.meanRequestsPerSecond)} | ${f1(r.cpuSeconds)} | ${perCheck(r) === undefined ? '—' : f1(1000 * perCheck(r)!)} | ${perCheck(r) === undefined ? '—' : f2((100 * x.n * perCheck(r)!) / 600)} | ${f1(r.peakMiB)} |`,
      );
    }
    line();
  }
}

/** Issue 18's targets for the largest PackageSync fleet measured. */
export function scaleTargets(fleet: readonly FleetResult[]): ScaleTarget[] {
  const p = fleet.filter(
    (x) => x.tool === 'PackageSync' && x.cpuSeconds !== undefined && (x.shape ?? 'plain') === 'plain',
  );
  const big = p.sort((a, b) => a.n - b.n).at(-1);
  if (!big) return [];
  const out: ScaleTarget[] = [
    {
      measure: `fleet ${big.n}: time to all Ready`,
      target: big.n >= 10_000 ? '≤ 600 s (issue 18)' : '≤ 600 s at 10,000 (issue 18; this run’s largest is smaller)',
      measured: `${f1(big.seconds)} s`,
      ...(big.n >= 10_000 ? { ok: big.seconds <= 600 } : {}),
    },
    {
      measure: `fleet ${big.n}: controller peak RSS`,
      target: '≤ 500 MiB',
      measured: `${f1(big.peakMiB)} MiB`,
      ok: big.peakMiB <= 500,
    },
    {
      measure: `fleet ${big.n}: controller requests per unit`,
      target: '≤ 10',
      measured: f2(total(big.client) / big.n),
      ok: total(big.client) / big.n <= 10,
    },
  ];
  if (big.idle && (big.idle.warmupSeconds ?? 0) >= 600) {
    // rested one interval first: the window holds the periodic checks of a fleet at rest (ADR 0031)
    const i = big.idle;
    out.push({
      measure: `fleet ${big.n} at rest: controller CPU`,
      target: '≤ 5 % of a core',
      measured: `${f2(i.cpuPercent)} % over ${f1(i.seconds)} s, ${i.warmupSeconds} s after Ready: ${i.reconciles ?? '?'} checks (${i.unchangedChecks ?? '?'} unchanged), ${f2(i.requestsPerSecond)} requests/s`,
      ok: i.cpuPercent <= 5,
    });
  } else if (big.idle) {
    // the window after Ready is shorter than one interval: the checks each unit gets every 10 m are projected
    // from the restart pass's CPU per check (an upper bound: it includes the watches' first LISTs)
    const check = big.restart && perCheck(big.restart);
    const steady = check === undefined ? undefined : (100 * big.n * check) / 600;
    out.push({
      measure: `fleet ${big.n} at rest: controller CPU`,
      target: '≤ 5 % of a core',
      measured: `${f2(big.idle.cpuPercent)} % over ${f1(big.idle.seconds)} s after Ready, ${f2(big.idle.requestsPerSecond)} requests/s${steady === undefined ? '' : `; with every unit's 10 m check: ${f2(steady)} % (projected)`}`,
      ok: Math.max(big.idle.cpuPercent, steady ?? 0) <= 5,
    });
  }
  if (big.restart)
    out.push({
      measure: `fleet ${big.n}: restart`,
      target: '0 writes, no herd',
      measured: `every unit checked in ${f1(big.restart.seconds)} s, ${big.restart.writes} writes, peak ${big.restart.peakRequestsPerSecond} requests/s`,
      ok: big.restart.writes === 0,
    });
  return out;
}

/** CPU seconds per check in a restart's first pass (after start-up), or undefined when not recorded. */
function perCheck(r: RestartFigures): number | undefined {
  if (r.startCpuSeconds === undefined || r.reconciles === 0) return undefined;
  return (r.cpuSeconds - r.startCpuSeconds) / r.reconciles;
}
