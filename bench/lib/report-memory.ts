import type { FleetResult } from './fleet.ts';

const f1 = (n: number) => n.toFixed(1);

/**
 * The sampled peak of the tool's resident memory with shared pages once, beside the VmHWM sum (procs.ts PeakFootprint):
 * processes that map one binary (the render workers) count its pages once here, once each in RSS. The targets are
 * judged on RSS, as issued.
 */
export const footprintNote = (x: FleetResult): string =>
  x.peakFootprint
    ? `; peak with shared pages once ${f1(x.peakFootprint.peakMiB)} (${perName(x.peakFootprint.perProcessMiB)})`
    : '';

const perName = (m: Record<string, number>) =>
  Object.entries(m)
    .map(([k, v]) => `${k} ${f1(v)}`)
    .join(' + ');
