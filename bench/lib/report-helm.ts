/** The Helm fleet's section of RESULTS.md and its targets (issue 27). */
import { total, verbs } from './cluster.ts';
import type { FleetResult } from './fleet.ts';
import { loadCell } from './machine-load.ts';
import { byProcess, footprintNote } from './report-memory.ts';

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const secs = (x: FleetResult) =>
  x.readyAtCap !== undefined ? `> ${f1(x.seconds)} (${x.readyAtCap}/${x.n} Ready at the cap)` : f1(x.seconds);

export function renderHelmFleet(rows: FleetResult[], line: (s?: string) => void): void {
  if (rows.length === 0) return;
  line('## 1e. Helm fleet: N releases of one `helm create` chart, both tools run Helm');
  line();
  line('The chart is `helm create`’s, made by the pinned helm (`hfleet/chart`: a Deployment, a Service and a');
  line('ServiceAccount; HPA, Ingress and HTTPRoute off), in the fleet’s repository, with the same values in both');
  line('tools (replicaCount 0, as the plain fleet). PackageSync: a PackageSync per unit with spec.helm (its render');
  line('workers run the Helm SDK). Flux: one GitRepository, one HelmChart built from it by source-controller, and a');
  line('HelmRelease per unit referring to it (spec.chartRef), installed by helm-controller (which also stores a');
  line('release Secret per unit). Time from the first create to all N Ready (observedGeneration current); peak RSS =');
  line('VmHWM of every process of the tool, PackageSync’s render workers included (their sum: an upper bound).');
  line();
  line(
    '| N | tool | time to all Ready (s) | peak RSS (MiB) | API server requests | by verb | controller’s own requests | load before (1 min) |',
  );
  line('|---|---|---|---|---|---|---|---|');
  for (const x of rows) {
    line(
      `| ${x.n} | ${x.tool} | ${secs(x)} | ${f1(x.peakMiB)} (${byProcess(x.perProcessPeakMiB)})${footprintNote(x)} | ${total(x.apiserver)} | ${verbs(x.apiserver)} | ${total(x.client)} (${verbs(x.client)}) | ${loadCell(x.load)} |`,
    );
  }
  line();
  const pairs = helmPairs(rows);
  if (pairs.length) {
    line('| N | time PackageSync / Flux | peak RSS PackageSync / Flux | API server requests PackageSync / Flux |');
    line('|---|---|---|---|');
    for (const { n, p, fx } of pairs) {
      const capped = fx.readyAtCap !== undefined ? '< ' : '';
      line(
        `| ${n} | ${capped}${f2(p.seconds / fx.seconds)}× | ${capped}${f2(p.peakMiB / fx.peakMiB)}× | ${f2(total(p.apiserver) / total(fx.apiserver))}× |`,
      );
    }
    line();
  }
}

function helmPairs(rows: FleetResult[]): { n: number; p: FleetResult; fx: FleetResult }[] {
  return [...new Set(rows.map((x) => x.n))].flatMap((n) => {
    const p = rows.find((x) => x.n === n && x.tool === 'PackageSync');
    const fx = rows.find((x) => x.n === n && x.tool === 'Flux');
    return p && fx ? [{ n, p, fx }] : [];
  });
}

/** Issue 27's Helm fleet targets at the largest N both tools ran: time ≤ 0.2× Flux, peak RSS ≤ 0.5× Flux. */
export function helmTargets(
  rows: FleetResult[],
): { measure: string; target: string; measured: string; ok?: boolean }[] {
  const last = helmPairs(rows).at(-1);
  if (!last) return [];
  const { n, p, fx } = last;
  const capped = fx.readyAtCap !== undefined;
  const judge = (ratio: number, limit: number) => (ratio <= limit ? true : capped ? undefined : false);
  return [
    {
      measure: `Helm fleet ${n}: time to all Ready`,
      target: '≤ 0.2× Flux helm-controller',
      measured: `${f1(p.seconds)} s vs ${secs(fx)} = ${capped ? '< ' : ''}${f2(p.seconds / fx.seconds)}×`,
      ok: judge(p.seconds / fx.seconds, 0.2),
    },
    {
      measure: `Helm fleet ${n}: peak RSS (PackageSync: controller + render workers)`,
      target: '≤ 0.5× Flux (source- + helm-controller)',
      measured:
        `${f1(p.peakMiB)} MiB vs ${f1(fx.peakMiB)} MiB = ${f2(p.peakMiB / fx.peakMiB)}×` +
        (p.peakFootprint && fx.peakFootprint
          ? ` (peaks with shared pages once: ${f1(p.peakFootprint.peakMiB)} vs ${f1(fx.peakFootprint.peakMiB)} MiB = ${f2(p.peakFootprint.peakMiB / fx.peakFootprint.peakMiB)}×)`
          : ''),
      ok: judge(p.peakMiB / fx.peakMiB, 0.5),
    },
  ];
}
