/**
 * dependsOn between PackageSyncs: a cycle can never become Ready (each waits for the other), so it is a
 * failure of its own, reported on every member, instead of DependencyNotReady forever.
 */

/**
 * The cycle through `start`, as keys from `start` back to it, or undefined. `edges` holds what is known of
 * the dependsOn graph: only PackageSyncs that are not Ready need be in it (a Ready one blocks nobody).
 */
export function dependsOnCycle(start: string, edges: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const path: string[] = [start];
  const visited = new Set<string>();
  const walk = (key: string): boolean => {
    for (const next of edges.get(key) ?? []) {
      if (next === start) return true;
      if (visited.has(next)) continue;
      visited.add(next);
      path.push(next);
      if (walk(next)) return true;
      path.pop();
    }
    return false;
  };
  return walk(start) ? [...path, start] : undefined;
}
