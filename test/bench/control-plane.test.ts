/**
 * The control plane's CPU over a run (bench/lib/control-plane.ts) and where the fleet's wall is shown
 * (bench/lib/report-wall.ts), on plain data: /proc/<pid>/stat parsing, the window's arithmetic, the pid files of
 * a cluster dir, and the report's rows — a component that was not measured must say so, never show 0.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  busyBetween,
  cpuBetween,
  cpuWindow,
  findControlPlane,
  isSettled,
  waitControlPlaneSettled,
  machineShare,
  parseMachineTicks,
  parseStatTicks,
  type ControlPlaneCpu,
} from '../../bench/lib/control-plane.ts';
import { controlPlaneShare, cpuCell, cpuRow, cpuRows, renderWall } from '../../bench/lib/report-wall.ts';
import type { FleetResult } from '../../bench/lib/fleet.ts';
import type { FleetFloorResult } from '../../bench/lib/fleet-floor.ts';

// a real line's shape: pid (comm) state ppid … utime=14 stime=15 …
const stat = (comm: string, utime: number, stime: number) =>
  `4242 (${comm}) S 1 4242 4242 0 -1 4194560 1234 0 0 0 ${utime} ${stime} 0 0 20 0 12 0 5555 123456789 4567 18446744073709551615`;

describe('parseStatTicks', () => {
  it.each([
    ['a plain command', stat('kube-apiserver', 1500, 250), 1750],
    ['a command with spaces and parentheses', stat('weird (name) x', 10, 5), 15],
    ['a process that has not run', stat('etcd', 0, 0), 0],
  ])('reads utime + stime of %s', (_, line, ticks) => {
    expect(parseStatTicks(line)).toBe(ticks);
  });

  it.each([
    ['no command', '4242 S 1 2 3'],
    ['a truncated line', '4242 (etcd) S 1 4242 4242 0 -1'],
    ['a non-number', stat('etcd', 1, 2).replace(' 1 2 ', ' x 2 ')],
  ])('gives up on %s', (_, line) => {
    expect(parseStatTicks(line)).toBeUndefined();
  });
});

describe('cpuBetween', () => {
  it('turns tick deltas into seconds and leaves out what is missing at either end or went backwards', () => {
    expect(
      cpuBetween(
        { 'kube-apiserver': 1000, etcd: 200, kwok: 50, 'kube-controller-manager': 500 },
        { 'kube-apiserver': 1600, etcd: 260, 'kube-controller-manager': 400 },
        100,
      ),
    ).toEqual({ 'kube-apiserver': 6, etcd: 0.6 });
  });

  it('is a share of every core: one busy core of two is half the machine', () => {
    expect(machineShare(60, 60, 2)).toBe(50);
    expect(machineShare(1, 0, 2)).toBe(0);
  });
});

describe('the machine’s busy share', () => {
  it('counts every state but idle and iowait as busy, from the aggregate line only', () => {
    const text = 'cpu  100 10 40 800 50 0 5 5 3 0\ncpu0 50 5 20 400 25 0 2 3 1 0\nintr 1 2 3\n';
    expect(parseMachineTicks(text)).toEqual({ busy: 160, total: 1010 });
    expect(parseMachineTicks('intr 1 2 3\n')).toBeUndefined();
  });

  it('is the busy delta over the total delta', () => {
    expect(busyBetween({ busy: 160, total: 1010 }, { busy: 310, total: 1210 })).toBe(75);
    expect(busyBetween({ busy: 1, total: 5 }, { busy: 1, total: 5 })).toBeUndefined();
  });
});

describe('findControlPlane', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cp-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes a PID only when its process runs that binary, and names every one it could not find', () => {
    mkdirSync(join(dir, 'pids'));
    // this test's own process is node, not etcd: a stale or reused PID must not be measured as etcd
    writeFileSync(join(dir, 'pids', 'etcd.pid'), `${process.pid}\n`);
    const cp = findControlPlane(dir);
    expect(cp.pids).toEqual({});
    expect(cp.missing).toHaveLength(4);
    expect(cp.missing.find((m) => m.startsWith('etcd'))).toMatch(/is not running etcd/);
    expect(cp.missing.find((m) => m.startsWith('kwok'))).toMatch(/no .*kwok\.pid/);
  });

  it('a window over nothing found measures nothing and says why', () => {
    const cpu = cpuWindow(findControlPlane(join(dir, 'absent')), 2)();
    expect(cpu.seconds).toEqual({});
    expect(cpu.notMeasured).toMatch(/kube-apiserver: no /);
    expect(cpuWindow(undefined, 2)().notMeasured).toBe('no cluster dir given');
  });
});

const cpu = (seconds: ControlPlaneCpu['seconds']): ControlPlaneCpu => ({
  wallSeconds: 100,
  cores: 2,
  seconds,
  machineBusyPercent: 97.5,
});
const all = cpu({ 'kube-apiserver': 100, 'kube-controller-manager': 50, etcd: 20, kwok: 2 });

describe('report rows', () => {
  it('gives CPU seconds, per unit and the share of the machine, or "not measured"', () => {
    expect(cpuCell(all, 'kube-apiserver', 1000)).toBe('100.0 s · 100.0 ms/unit · 50.0 %');
    expect(cpuCell(cpu({ etcd: 1 }), 'kwok', 10)).toBe('not measured');
    expect(cpuCell(undefined, 'etcd', 10)).toBe('not measured');
    expect(controlPlaneShare(all)).toBe('86.0 %');
    expect(controlPlaneShare(cpu({ etcd: 1 }))).toBe('not measured');
  });

  it('renders a row with the controller’s own CPU, and a run from before CPU was measured', () => {
    expect(cpuRow({ n: 1000, run: 'PackageSync', units: 1000, cpu: all, controllerSeconds: 30 })).toBe(
      '| 1000 | PackageSync | 100.0 | 100.0 s · 100.0 ms/unit · 50.0 % | 50.0 s · 50.0 ms/unit · 25.0 % | 20.0 s · 20.0 ms/unit · 10.0 % | 2.0 s · 2.0 ms/unit · 1.0 % | 86.0 % | 30.0 s · 15.0 % | 97.5 % |',
    );
    expect(cpuRow({ n: 10, run: 'Flux', units: 10 })).toBe(
      '| 10 | Flux | — | not measured | not measured | not measured | not measured | not measured | — | not measured |',
    );
  });

  const fleetRow = (tool: 'PackageSync' | 'Flux', n: number, extra: Partial<FleetResult> = {}): FleetResult => ({
    tool,
    n,
    seconds: 50,
    peakMiB: 100,
    perProcessPeakMiB: {},
    apiserver: {},
    client: {},
    ...extra,
  });
  const floor: FleetFloorResult = {
    n: 1000,
    inFlight: 32,
    appliedSeconds: 10,
    currentSeconds: 20,
    applied: 4000,
    retries: 0,
    apiserver: { APPLY: 4000, POST: 2000 },
    controlPlane: all,
  };

  it('orders PackageSync, its floor, then Flux at each N; a capped run counts only its Ready units', () => {
    const rows = cpuRows(
      [
        fleetRow('Flux', 1000, { readyAtCap: 400, controlPlane: all }),
        fleetRow('PackageSync', 1000, { controlPlane: all }),
        fleetRow('PackageSync', 100, { shape: 'kustomize' }),
      ],
      [floor],
    );
    expect(rows.map((r) => `${r.n} ${r.run} ${r.units}`)).toEqual([
      '1000 PackageSync 1000',
      '1000 floor 1000',
      '1000 Flux 400',
    ]);
  });

  it('puts each floor next to PackageSync’s time at the same N, with the ratio', () => {
    const out: string[] = [];
    renderWall([fleetRow('PackageSync', 1000, { seconds: 90 })], [floor], (s = '') => out.push(s));
    expect(out.join('\n')).toContain(
      '| 1000 | 90.0 | 10.0 | 20.0 | 4.50× | 32 | 4000 | 0 | 6000 | APPLY 4000, POST 2000 |',
    );
  });

  it('renders nothing for results from before either existed', () => {
    const out: string[] = [];
    renderWall([fleetRow('PackageSync', 100)], [], (s = '') => out.push(s));
    expect(out).toEqual([]);
  });
});

describe('isSettled: the control plane at rest before a run', () => {
  it('under 15 % of one core over the window, and never for an empty window', () => {
    expect(isSettled(1, 10)).toBe(true);
    expect(isSettled(1.5, 10)).toBe(false);
    expect(isSettled(0, 0)).toBe(false);
  });
});

describe('waitControlPlaneSettled', () => {
  it('returns at once, unsettled, without processes to read', async () => {
    expect(await waitControlPlaneSettled(undefined)).toEqual({ seconds: 0, settled: false });
    expect(await waitControlPlaneSettled({ pids: {}, missing: ['x'] })).toEqual({ seconds: 0, settled: false });
  });
});
