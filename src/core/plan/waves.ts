import type { KubeObject } from '../object.ts';
import { groupOf, isRecord, ownField } from '../object.ts';
import { crdRank, kindRank, otherKindsRank } from './kind-order.ts';

/**
 * Objects grouped by kind rank, in rank order; input (render) order inside a group. Apply follows the
 * dependency graph (graph.ts), which uses kind order only as its tie-break; this plain kind order is
 * what `packagesync render` prints when the graph is invalid.
 */
export function planWaves(objects: readonly KubeObject[]): KubeObject[][] {
  const rankOf = rankerFor(objects);
  const byRank = new Map<number, KubeObject[]>();
  for (const obj of objects) {
    const rank = rankOf(obj);
    const wave = byRank.get(rank);
    if (wave) wave.push(obj);
    else byRank.set(rank, [obj]);
  }
  return [...byRank.entries()].sort(([a], [b]) => a - b).map(([, wave]) => wave);
}

/**
 * Kind rank, except that a custom resource whose CRD is in the package always comes after the CRDs,
 * even if its kind reuses a built-in name ranked earlier (a `Namespace` in some other group).
 */
export function rankerFor(objects: readonly KubeObject[]): (obj: KubeObject) => number {
  const definedHere = packageKinds(objects);
  return (obj) => {
    const rank = kindRank(obj.kind);
    return rank <= crdRank && definedHere.has(`${groupOf(obj.apiVersion)}/${obj.kind}`) ? otherKindsRank : rank;
  };
}

/** `group/kind` of every custom resource a CRD in the package defines. */
function packageKinds(objects: readonly KubeObject[]): Set<string> {
  const kinds = new Set<string>();
  for (const obj of objects) {
    if (obj.kind !== 'CustomResourceDefinition' || groupOf(obj.apiVersion) !== 'apiextensions.k8s.io') continue;
    const spec = ownField(obj, 'spec');
    const names = isRecord(spec) ? ownField(spec, 'names') : undefined;
    const group = isRecord(spec) ? ownField(spec, 'group') : undefined;
    const kind = isRecord(names) ? ownField(names, 'kind') : undefined;
    if (typeof group === 'string' && typeof kind === 'string') kinds.add(`${group}/${kind}`);
  }
  return kinds;
}
