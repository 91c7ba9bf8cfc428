/** Which targets each wave takes, frozen when a rollout starts (docs/adr/0042). */
import type { Wave } from '../../api/packagesyncset.ts';
import { matchesSelector } from './selector.ts';
import type { Target } from './targets.ts';

export interface WavePlan {
  name: string;
  targets: string[];
}

/**
 * Waves take, in order, the targets no earlier wave took that match their selector, at most `count` or
 * `percent` of all targets (rounded up, so 1% of 50 is one target, not none), in name order. A wave without
 * `targets` takes every target left. Targets no wave takes are `unassigned`: the rollout never moves them.
 */
export function planWaves(
  targets: readonly Target[],
  waves: readonly Wave[],
): { plan: WavePlan[]; unassigned: string[] } {
  const sorted = [...targets].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const taken = new Set<string>();
  const plan = waves.map((w) => {
    const candidates = sorted.filter((t) => !taken.has(t.name) && matchesSelector(w.targets?.selector, t.labels));
    let cap = candidates.length;
    if (w.targets?.count !== undefined) cap = Math.min(cap, w.targets.count);
    if (w.targets?.percent !== undefined) cap = Math.min(cap, Math.ceil((w.targets.percent * sorted.length) / 100));
    const chosen = candidates.slice(0, cap).map((t) => t.name);
    for (const n of chosen) taken.add(n);
    return { name: w.name, targets: chosen };
  });
  return { plan, unassigned: sorted.filter((t) => !taken.has(t.name)).map((t) => t.name) };
}

/** IntOrString against a total: a number as is, "25%" of total rounded down (budget) or up (parallelism). */
export function resolveIntOrPercent(
  v: number | string | undefined,
  total: number,
  round: 'down' | 'up',
  fallback: number,
): number {
  if (v === undefined) return fallback;
  if (typeof v === 'number') return v;
  const pct = Number(v.slice(0, -1));
  const exact = (pct * total) / 100;
  return round === 'down' ? Math.floor(exact) : Math.ceil(exact);
}
