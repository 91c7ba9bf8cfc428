import type { FleetResult } from './fleet.ts';

const f1 = (n: number) => n.toFixed(1);

/**
 * The sampled peak of the tool's resident memory with shared pages once, beside the VmHWM sum (procs.ts PeakFootprint):
 * processes that map one binary (the render workers) count its pages once here, once each in RSS. The targets are
 * judged on RSS, as issued.
 */
export const footprintNote = (x: FleetResult): string =>
  x.peakFootprint
    ? `; peak with shared pages once ${f1(x.peakFootprint.peakMiB)} (${byProcess(x.peakFootprint.perProcessMiB)})`
    : '';

/** MiB by process name, as the reports write them: `controller 162.7 + render-worker 77.2`. */
export const byProcess = (m: Record<string, number>): string =>
  Object.entries(m)
    .map(([k, v]) => `${k} ${f1(v)}`)
    .join(' + ');
