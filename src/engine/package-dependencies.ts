/**
 * spec.dependsOn: the PackageSyncs that must be Ready before this one is applied (Flux's dependsOn), and the
 * cycles no waiting can end.
 */
import type { PackageSync, Spec } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import { fail, ok, type Result } from '../core/failure.ts';
import { dependsOnCycle } from '../core/plan/depends-on-cycle.ts';
import { isReadyFor } from '../core/status.ts';
import type { Ports } from './ports.ts';

const notReadyOrMissing = (key: string) => `dependency ${key} is not Ready (or does not exist)`;

/** How many PackageSyncs a dependsOn cycle search reads at most (the chain of those not Ready). */
const CYCLE_SEARCH_LIMIT = 64;

/**
 * Every dependsOn PackageSync Ready for its current generation, or the first that is not, described. One that
 * is not Ready is followed (its own dependsOn, as far as they are not Ready either): a chain that leads back
 * here is a cycle, which no waiting can end (DependencyCycle, on every member).
 */
export async function dependenciesReady(ps: PackageSync, spec: Spec, ports: Ports): Promise<Result<void>> {
  const self = `${ps.metadata.namespace}/${ps.metadata.name}`;
  const depsOf = (p: PackageSync, s: { dependsOn?: { name: string; namespace?: string }[] } | undefined) =>
    (s?.dependsOn ?? []).map((d) => `${d.namespace ?? p.metadata.namespace}/${d.name}`);
  let blocker: Result<void> = ok(undefined);
  const edges = new Map<string, string[]>([[self, depsOf(ps, spec)]]);
  const pending = [...edges.get(self)!];
  while (pending.length > 0 && edges.size < CYCLE_SEARCH_LIMIT) {
    const key = pending.shift()!;
    if (edges.has(key)) continue;
    const [ns, name] = key.split('/') as [string, string];
    // conditions and spec are enough: an inventory in shards is not read
    const other = await ports.packageSyncs.getStored(ns, name);
    const direct = edges.get(self)!.includes(key);
    // In another namespace, "missing" and "not Ready" read the same: the tenant learns nothing of a namespace
    // it may not read (issue 35). --no-cross-namespace-refs refuses such a dependency before this.
    const foreign = ns !== ps.metadata.namespace;
    if (!other) {
      const why = foreign ? notReadyOrMissing(key) : `dependency ${key} does not exist`;
      if (direct && blocker.ok) blocker = fail(Reason.DependencyNotReady, why);
      edges.set(key, []);
      continue;
    }
    if (isReadyFor(other.status, other.metadata.generation)) {
      edges.set(key, []);
      continue;
    }
    const why = foreign ? notReadyOrMissing(key) : `dependency ${key} is not Ready`;
    if (direct && blocker.ok) blocker = fail(Reason.DependencyNotReady, why);
    const next = depsOf(other, other.spec as { dependsOn?: { name: string; namespace?: string }[] });
    edges.set(key, next);
    pending.push(...next);
  }
  const cycle = dependsOnCycle(self, edges);
  if (cycle) {
    return fail(
      Reason.DependencyCycle,
      `spec.dependsOn forms a cycle: ${cycle.join(' → ')}; none of them can become Ready: remove one of these dependsOn entries`,
      { terminal: true },
    );
  }
  return blocker;
}
