import type { FleetResult } from './fleet.ts';

const f1 = (n: number) => n.toFixed(1);

/**
 * The sampled peak of the tool's summed PSS, beside the VmHWM sum (procs.ts PeakPss): processes that map one binary
 * (the render workers) count its pages once here, once each in RSS. The targets are judged on RSS, as issued.
 */
export const pssNote = (x: FleetResult): string =>
  x.peakPss ? `; summed PSS peak ${f1(x.peakPss.peakMiB)} (${perName(x.peakPss.perProcessMiB)})` : '';

const perName = (m: Record<string, number>) =>
  Object.entries(m)
    .map(([k, v]) => `${k} ${f1(v)}`)
    .join(' + ');
