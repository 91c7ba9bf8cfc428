/**
 * RSS trend of the churn soak: a least-squares slope per controller lifetime and one over the whole run.
 * The whole run's slope is pooled within lifetimes (each lifetime's samples centred on its own means), so the
 * saw-tooth of SIGKILL and restart does not read as a trend: what remains is how fast memory grows while a
 * process lives, the figure that says whether it leaks.
 */

export interface Sample {
  /** Seconds since the run started. */
  t: number;
  rssMiB: number;
  /** V8's used heap at the same moment (from the controller's metrics), when it could be read. */
  heapUsedMiB?: number;
}

/**
 * Slope in MiB/hour by least squares of RSS (or of V8's used heap: RSS rising while it stays level is memory
 * the allocator keeps, not objects held); undefined with fewer than 3 samples or no time spread.
 */
export function slopeMiBPerHour(
  samples: readonly Sample[],
  of: 'rssMiB' | 'heapUsedMiB' = 'rssMiB',
): number | undefined {
  samples = samples.filter((s) => s[of] !== undefined);
  if (samples.length < 3) return undefined;
  const n = samples.length;
  const mt = samples.reduce((a, s) => a + s.t, 0) / n;
  const mr = samples.reduce((a, s) => a + s[of]!, 0) / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.t - mt) * (s[of]! - mr);
    den += (s.t - mt) ** 2;
  }
  return den === 0 ? undefined : (num / den) * 3600;
}

/** One slope over several lifetimes: least squares on the samples centred per lifetime (fixed effects). */
export function pooledSlopeMiBPerHour(lifetimes: readonly (readonly Sample[])[]): number | undefined {
  let num = 0;
  let den = 0;
  let used = 0;
  for (const samples of lifetimes) {
    if (samples.length < 3) continue;
    const n = samples.length;
    const mt = samples.reduce((a, s) => a + s.t, 0) / n;
    const mr = samples.reduce((a, s) => a + s.rssMiB, 0) / n;
    for (const s of samples) {
      num += (s.t - mt) * (s.rssMiB - mr);
      den += (s.t - mt) ** 2;
    }
    used++;
  }
  return used === 0 || den === 0 ? undefined : (num / den) * 3600;
}

/** The samples after the first `warmupSeconds` of a lifetime that started at `startT`: the cold sync's climb
 * (every unit rendered and applied, caches filling) is not a leak. */
export function afterWarmup(samples: readonly Sample[], startT: number, warmupSeconds: number): Sample[] {
  return samples.filter((s) => s.t - startT >= warmupSeconds);
}
