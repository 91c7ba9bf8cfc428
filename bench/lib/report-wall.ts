/**
 * Where the fleet's wall is (issue 18.1), for RESULTS.md: each PackageSync fleet next to the API server's floor for
 * the same fleet (fleet-floor.ts), and the control plane's CPU over every fleet run (control-plane.ts).
 */
import { total, verbs } from './cluster.ts';
import { CONTROL_PLANE, machineShare, type ControlPlaneCpu } from './control-plane.ts';
import type { FleetResult } from './fleet.ts';
import type { FleetFloorResult } from './fleet-floor.ts';

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);

/** One component's cell: "CPU s · ms per unit · % of the machine", or "not measured". */
export function cpuCell(cpu: ControlPlaneCpu | undefined, component: string, units: number): string {
  const s = cpu?.seconds[component as keyof ControlPlaneCpu['seconds']];
  if (cpu === undefined || s === undefined) return 'not measured';
  return `${f1(s)} s · ${f1((1000 * s) / units)} ms/unit · ${f1(machineShare(s, cpu.wallSeconds, cpu.cores))} %`;
}

/** The whole control plane's share of the machine, when every component was measured. */
export function controlPlaneShare(cpu: ControlPlaneCpu | undefined): string {
  if (!cpu || CONTROL_PLANE.some((c) => cpu.seconds[c] === undefined)) return 'not measured';
  const sum = CONTROL_PLANE.reduce((a, c) => a + cpu.seconds[c]!, 0);
  return `${f1(machineShare(sum, cpu.wallSeconds, cpu.cores))} %`;
}

export interface CpuRow {
  n: number;
  run: string;
  cpu?: ControlPlaneCpu;
  /** Units Ready in the window (a capped run: fewer than n). */
  units: number;
  /** The tool's own controller CPU seconds (from its metrics; the floor has none). */
  controllerSeconds?: number;
}

export function cpuRow(r: CpuRow): string {
  const cells = CONTROL_PLANE.map((c) => cpuCell(r.cpu, c, r.units));
  const controller =
    r.controllerSeconds === undefined
      ? '—'
      : r.cpu
        ? `${f1(r.controllerSeconds)} s · ${f1(machineShare(r.controllerSeconds, r.cpu.wallSeconds, r.cpu.cores))} %`
        : `${f1(r.controllerSeconds)} s`;
  const wall = r.cpu ? f1(r.cpu.wallSeconds) : '—';
  const busy = r.cpu?.machineBusyPercent === undefined ? 'not measured' : `${f1(r.cpu.machineBusyPercent)} %`;
  return `| ${r.n} | ${r.run} | ${wall} | ${cells.join(' | ')} | ${controlPlaneShare(r.cpu)} | ${controller} | ${busy} |`;
}

/** The CPU rows, the fleet's runs and the floors, by N. */
export function cpuRows(fleet: readonly FleetResult[], floors: readonly FleetFloorResult[]): CpuRow[] {
  const rows: CpuRow[] = [
    ...fleet
      .filter((x) => (x.shape ?? 'plain') === 'plain')
      .map((x) => ({
        n: x.n,
        run: x.tool,
        units: x.readyAtCap ?? x.n,
        ...(x.controlPlane ? { cpu: x.controlPlane } : {}),
        ...(x.cpuSeconds !== undefined ? { controllerSeconds: x.cpuSeconds } : {}),
      })),
    ...floors.map((f) => ({
      n: f.n,
      run: 'floor',
      units: f.n,
      ...(f.controlPlane ? { cpu: f.controlPlane } : {}),
      ...(f.harnessCpuSeconds !== undefined ? { controllerSeconds: f.harnessCpuSeconds } : {}),
    })),
  ];
  const order = (run: string) => ['PackageSync', 'floor', 'Flux'].indexOf(run);
  return rows.sort((a, b) => a.n - b.n || order(a.run) - order(b.run));
}

export function renderWall(
  fleet: readonly FleetResult[],
  floors: readonly FleetFloorResult[],
  line: (s?: string) => void,
): void {
  const rows = cpuRows(fleet, floors);
  if (!floors.length && !rows.some((r) => r.cpu)) return;
  line('## 1d. Where the wall is: the API server’s floor for the fleet, and the control plane’s CPU');
  line();
  if (floors.length) {
    line('Floor: the harness server-side applies every unit’s four objects itself (the same documents, one SSA PATCH');
    line('each, `bench/lib/floor.ts` over one keep-alive pool, the given number in flight), then waits until every');
    line('Deployment is Current by the controller’s own health rules (src/core/health), through one watch. No git,');
    line('render, inventory or status: what PackageSync takes over it is its own; what the floor takes is the control');
    line('plane’s. Applied: the floor’s PATCHes answered 2xx, counted by its own client. Requests: the API server’s');
    line(
      'delta by verb, minus the harness’s watch (APPLY ≈ the floor’s PATCHes; the rest is kube-controller-manager’s',
    );
    line('ReplicaSets, EndpointSlices, Deployment status…, and any other client of the same API server meanwhile).');
    line();
    line(
      '| N | PackageSync to all Ready (s) | floor: all applied (s) | floor: all applied and Current (s) | PackageSync / floor | in flight | applied (floor’s own count) | retried | API server requests (floor) | by verb |',
    );
    line('|---|---|---|---|---|---|---|---|---|---|');
    for (const f of [...floors].sort((a, b) => a.n - b.n)) {
      const p = fleet.find((x) => x.n === f.n && x.tool === 'PackageSync' && (x.shape ?? 'plain') === 'plain');
      line(
        `| ${f.n} | ${p ? f1(p.seconds) : 'not run'} | ${f1(f.appliedSeconds)} | ${f1(f.currentSeconds)} | ${p ? `${f2(p.seconds / f.currentSeconds)}×` : '—'} | ${f.inFlight} | ${f.applied} | ${f.retries} | ${total(f.apiserver)} | ${verbs(f.apiserver)} |`,
      );
    }
    line();
  }
  line(
    'Control-plane CPU over each run’s window (PackageSync and Flux: first create → all Ready; floor: first PATCH →',
  );
  line('all Current): user + system seconds from /proc/<pid>/stat of the cluster’s processes (hack/cluster.sh’s pid');
  line('files), then per Ready unit and as a share of the whole machine (all cores: on 2 cores, one busy core is');
  line('50 %). “controller”: the tool’s own CPU from its metrics, since its start (Flux: both controllers); for the');
  line(
    'floor, the harness’s own over the window (the floor’s client: a busy harness would make the floor look slower).',
  );
  line();
  line(
    `| N | run | window (s) | ${CONTROL_PLANE.join(' | ')} | control plane, % of the machine | controller (s · % of the machine) | machine busy (every process) |`,
  );
  line(`|---|---|---|${CONTROL_PLANE.map(() => '---|').join('')}---|---|---|`);
  for (const r of rows) line(cpuRow(r));
  const why = rows.find((r) => r.cpu?.notMeasured)?.cpu?.notMeasured;
  if (why) line(`\nNot measured: ${why}.`);
  line();
}
