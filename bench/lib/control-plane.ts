/**
 * The control plane's own CPU over a run: user + system time of kube-apiserver, kube-controller-manager, etcd
 * and kwok, from /proc/<pid>/stat, read at the start and the end of the window. The PIDs come from the pid
 * files hack/cluster.sh keeps in its cluster dir (`<dir>/pids/<name>.pid`, the dir holding the kubeconfig it
 * writes), so `--kubeconfig` of another cluster reads that cluster's processes. A component whose pid file is
 * missing, or whose process is not that binary (a stale file, a reused PID), is "not measured": never zero.
 * This is what shows whether the API server is the wall: on 2 cores, one busy core is half the machine.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

export const CONTROL_PLANE = ['kube-apiserver', 'kube-controller-manager', 'etcd', 'kwok'] as const;
export type Component = (typeof CONTROL_PLANE)[number];

export interface ControlPlaneCpu {
  /** The window's length, and the machine's cores (the share is of all of them). */
  wallSeconds: number;
  cores: number;
  /** CPU seconds (user + system, every thread) by component; a component not here was not measured. */
  seconds: Partial<Record<Component, number>>;
  /** Why the others were not measured. */
  notMeasured?: string;
  /** The whole machine's busy share over the window (every process, /proc/stat): beside the control plane's, it says
   * whether the machine was full (others' work included) or the control plane held back with cores to spare. */
  machineBusyPercent?: number;
}

export interface ControlPlanePids {
  pids: Partial<Record<Component, number>>;
  missing: string[];
}

/**
 * utime + stime (fields 14 and 15, clock ticks) of a /proc/<pid>/stat line. Field 2, the command, is in
 * parentheses and may itself hold spaces and parentheses: fields are counted after the last ')'.
 */
export function parseStatTicks(stat: string): number | undefined {
  const end = stat.lastIndexOf(')');
  if (end < 0) return undefined;
  const fields = stat
    .slice(end + 1)
    .trim()
    .split(/\s+/);
  // fields[0] is field 3 (state): field k is fields[k - 3]
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (fields.length < 13 || !Number.isInteger(utime) || !Number.isInteger(stime)) return undefined;
  return utime + stime;
}

/** Ticks at the end minus ticks at the start, as seconds; a component missing at either end is left out. */
export function cpuBetween(
  before: Partial<Record<Component, number>>,
  after: Partial<Record<Component, number>>,
  ticksPerSecond: number,
): Partial<Record<Component, number>> {
  const out: Partial<Record<Component, number>> = {};
  for (const c of CONTROL_PLANE) {
    const b = before[c];
    const a = after[c];
    if (b !== undefined && a !== undefined && a >= b) out[c] = (a - b) / ticksPerSecond;
  }
  return out;
}

/** Busy and total jiffies of the machine from /proc/stat's first ("cpu") line; idle and iowait are not busy. */
export function parseMachineTicks(procStat: string): { busy: number; total: number } | undefined {
  const line = procStat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return undefined;
  // user nice system idle iowait irq softirq steal (guest and guest_nice are already inside user and nice)
  const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (v.length < 5 || v.some((x) => !Number.isFinite(x))) return undefined;
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: total - v[3]! - v[4]!, total };
}

/** Busy share of the machine between two /proc/stat readings, percent. */
export function busyBetween(
  before: { busy: number; total: number },
  after: { busy: number; total: number },
): number | undefined {
  const total = after.total - before.total;
  return total > 0 ? (100 * (after.busy - before.busy)) / total : undefined;
}

function machineNow(): { busy: number; total: number } | undefined {
  try {
    return parseMachineTicks(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** A component's CPU as a share of the whole machine over the window, percent (100 = every core busy). */
export const machineShare = (cpuSeconds: number, wallSeconds: number, cores: number): number =>
  wallSeconds > 0 && cores > 0 ? (100 * cpuSeconds) / (wallSeconds * cores) : 0;

/** The control plane's PIDs from a cluster dir of hack/cluster.sh, each checked against its binary's name. */
export function findControlPlane(clusterDir: string): ControlPlanePids {
  const pids: Partial<Record<Component, number>> = {};
  const missing: string[] = [];
  for (const c of CONTROL_PLANE) {
    const file = join(clusterDir, 'pids', `${c}.pid`);
    if (!existsSync(file)) {
      missing.push(`${c}: no ${file}`);
      continue;
    }
    const pid = Number(readFileSync(file, 'utf8').trim());
    let argv0 = '';
    try {
      argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    } catch {
      // not running
    }
    if (Number.isInteger(pid) && pid > 0 && basename(argv0) === c) pids[c] = pid;
    else missing.push(`${c}: pid ${pid} is not running ${c}`);
  }
  return { pids, missing };
}

function ticksNow(pids: Partial<Record<Component, number>>): Partial<Record<Component, number>> {
  const out: Partial<Record<Component, number>> = {};
  for (const c of CONTROL_PLANE) {
    const pid = pids[c];
    if (pid === undefined) continue;
    try {
      const t = parseStatTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      if (t !== undefined) out[c] = t;
    } catch {
      // the process went away: not measured
    }
  }
  return out;
}

let clkTck: number | undefined;
function ticksPerSecond(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100; // USER_HZ on every Linux architecture the bench runs on
    }
  }
  return clkTck;
}

/** Starts a window now; the returned function ends it and says what each component spent. */
export function cpuWindow(cp: ControlPlanePids | undefined, cores: number): () => ControlPlaneCpu {
  const before = cp ? ticksNow(cp.pids) : {};
  const machineBefore = machineNow();
  const t0 = performance.now();
  return () => {
    const seconds = cpuBetween(before, cp ? ticksNow(cp.pids) : {}, ticksPerSecond());
    const machineAfter = machineNow();
    const busy = machineBefore && machineAfter ? busyBetween(machineBefore, machineAfter) : undefined;
    const gone = CONTROL_PLANE.filter((c) => seconds[c] === undefined && cp?.pids[c] !== undefined).map(
      (c) => `${c}: its process went away`,
    );
    const why = [...(cp ? cp.missing : ['no cluster dir given']), ...gone];
    return {
      wallSeconds: (performance.now() - t0) / 1000,
      cores,
      seconds,
      ...(why.length ? { notMeasured: why.join('; ') } : {}),
      ...(busy !== undefined ? { machineBusyPercent: busy } : {}),
    };
  };
}

/** How busy the control plane may be and still count as at rest before a run (% of one core, all of it). */
export const SETTLED_PERCENT = 15;

/**
 * Waits until the control plane has been at rest for `sampleMs` (its components together under SETTLED_PERCENT
 * of one core), at most `maxMs`: the previous run's cleanup (a namespace of 10,000 units deleted, then
 * kube-controller-manager's garbage collector catching up) must not be measured as the next run's cost. Returns
 * the seconds waited and whether it settled; without pids (another cluster), it returns at once, unsettled.
 */
export async function waitControlPlaneSettled(
  cp: ControlPlanePids | undefined,
  opts: { sampleMs?: number; maxMs?: number } = {},
): Promise<{ seconds: number; settled: boolean }> {
  const sampleMs = opts.sampleMs ?? 10_000;
  const maxMs = opts.maxMs ?? 10 * 60_000;
  const t0 = performance.now();
  if (!cp || Object.keys(cp.pids).length === 0) return { seconds: 0, settled: false };
  for (;;) {
    const end = cpuWindow(cp, 1);
    await new Promise((r) => setTimeout(r, sampleMs));
    const window = end();
    const busy = Object.values(window.seconds).reduce((a, b) => a + b, 0);
    const seconds = (performance.now() - t0) / 1000;
    if (isSettled(busy, window.wallSeconds)) return { seconds, settled: true };
    if (performance.now() - t0 >= maxMs) return { seconds, settled: false };
  }
}

/** Whether `cpuSeconds` over `wallSeconds` is under SETTLED_PERCENT of one core. */
export const isSettled = (cpuSeconds: number, wallSeconds: number): boolean =>
  wallSeconds > 0 && (100 * cpuSeconds) / wallSeconds < SETTLED_PERCENT;
