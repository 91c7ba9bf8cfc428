import { loadavg } from 'node:os';

/**
 * A comparison with Flux means something only on a quiet machine: the Flux rows of RESULTS.md were once
 * measured at a load average of 15–22 with other work running. Before each fleet run of a comparison the
 * bench waits for the 1-minute load average to fall to QUIET_LOAD (the last run's own load decays with a
 * one-minute time constant), and records the load it started at beside the row; still above after the wait,
 * the row is marked, or with --require-quiet the run is refused.
 */
export const QUIET_LOAD = 1.5;

export interface LoadBeforeRun {
  /** The 1-minute load average when the run started. */
  loadAverage1m: number;
  quiet: boolean;
  waitedSeconds: number;
}

export interface QuietWait {
  maxWaitSeconds: number;
  limit?: number;
  pollSeconds?: number;
  /** The 1-minute load average (os.loadavg by default; tests give their own). */
  read?: () => number;
  sleep?: (seconds: number) => Promise<void>;
}

export async function waitQuiet(w: QuietWait): Promise<LoadBeforeRun> {
  const limit = w.limit ?? QUIET_LOAD;
  const read = w.read ?? (() => loadavg()[0] ?? 0);
  const sleep = w.sleep ?? ((s: number) => new Promise<void>((r) => setTimeout(r, s * 1000)));
  const poll = w.pollSeconds ?? 5;
  let waited = 0;
  let load = read();
  while (load > limit && waited < w.maxWaitSeconds) {
    await sleep(poll);
    waited += poll;
    load = read();
  }
  return { loadAverage1m: load, quiet: load <= limit, waitedSeconds: waited };
}

/** Why a run is refused, or undefined when it may start. */
export function refusal(what: string, load: LoadBeforeRun, required: boolean): string | undefined {
  if (load.quiet || !required) return undefined;
  return (
    `${what}: the load average over the last minute is ${load.loadAverage1m.toFixed(2)} (> ${QUIET_LOAD}) after ` +
    `waiting ${load.waitedSeconds} s; a comparison with Flux needs a quiet machine: stop the other work, or run ` +
    'without --require-quiet to measure anyway with the row marked'
  );
}

/** The report's "load before" cell: the figure, marked when the machine was not quiet. */
export function loadCell(load: LoadBeforeRun | undefined): string {
  if (!load) return '—';
  const figure = load.loadAverage1m.toFixed(2);
  return load.quiet ? figure : `${figure} ⚠ not quiet (> ${QUIET_LOAD})`;
}
