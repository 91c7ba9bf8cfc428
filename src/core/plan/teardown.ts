/**
 * Delete order for prune and for deleting a PackageSync: the apply graph reversed. An object is deleted
 * only once everything that depends on it is gone: custom resources before their CRD, objects before
 * their Namespace, a depends-on dependent before its dependency. So an operator's finalizers on its
 * custom resources still have their CRD (and, with depends-on, the operator) while they run
 * (kustomize-controller #301), and cli-utils' destroyer order holds.
 *
 * Built from the live copies (the inventory keeps no manifests), and lenient where apply is strict:
 * teardown must always make progress, so a depends-on that does not parse or names something outside
 * the set is ignored, and objects caught in a cycle are deleted without waiting for one another.
 */
import { isRecord, ownField, refKey, type KubeObject, type ObjectRef } from '../object.ts';
import { readDependsOn } from './depends-on.ts';
import { kindRank } from './kind-order.ts';

export interface Teardown {
  refs: ObjectRef[];
  /** For each ref, the refs that must be gone before it is deleted. */
  waitFor: number[][];
  /** For each ref, the refs that wait for it to be gone. */
  waiters: number[][];
  /** Delete order: dependents first; ties in reverse kind order. */
  order: number[];
}

export function planTeardown(candidates: readonly ObjectRef[], live: ReadonlyMap<string, KubeObject>): Teardown {
  const refs = [...candidates];
  const index = new Map(refs.map((r, i) => [refKey(r), i]));
  const waitFor: number[][] = refs.map(() => []);
  const crds = new Map<string, number>();
  const namespaces = new Map<string, number>();
  for (const [i, r] of refs.entries()) {
    if (r.group === '' && r.kind === 'Namespace') namespaces.set(r.name, i);
    const obj = live.get(refKey(r));
    if (r.group === 'apiextensions.k8s.io' && r.kind === 'CustomResourceDefinition' && obj) {
      const spec = ownField(obj, 'spec');
      const names = isRecord(spec) ? ownField(spec, 'names') : undefined;
      const group = isRecord(spec) ? ownField(spec, 'group') : undefined;
      const kind = isRecord(names) ? ownField(names, 'kind') : undefined;
      if (typeof group === 'string' && typeof kind === 'string') crds.set(`${group}/${kind}`, i);
    }
  }
  for (const [i, r] of refs.entries()) {
    const needs = new Set<number | undefined>([
      crds.get(`${r.group}/${r.kind}`),
      r.namespace ? namespaces.get(r.namespace) : undefined,
    ]);
    const obj = live.get(refKey(r));
    const deps = obj ? readDependsOn(obj) : undefined;
    if (deps?.ok) for (const d of deps.value) needs.add(index.get(refKey(d)));
    for (const dependency of needs) if (dependency !== undefined && dependency !== i) waitFor[dependency]!.push(i);
  }

  const order = deleteOrder(refs, waitFor);
  const waiters: number[][] = refs.map(() => []);
  for (const [i, ws] of waitFor.entries()) for (const w of ws) waiters[w]!.push(i);
  return { refs, waitFor, waiters, order };
}

/** Kahn's algorithm; whatever a cycle leaves over drops its edges inside the cycle and goes last. */
function deleteOrder(refs: readonly ObjectRef[], waitFor: number[][]): number[] {
  const rank = (i: number) => -kindRank(refs[i]!.kind);
  const byRank = (a: number, b: number) => rank(a) - rank(b) || a - b;
  const pending = waitFor.map((w) => w.length);
  const released: number[][] = refs.map(() => []);
  for (const [i, ws] of waitFor.entries()) for (const w of ws) released[w]!.push(i);
  const order: number[] = [];
  let ready = refs.flatMap((_, i) => (pending[i] === 0 ? [i] : []));
  while (ready.length > 0) {
    ready.sort(byRank);
    const next: number[] = [];
    for (const i of ready) {
      order.push(i);
      for (const d of released[i]!) if (--pending[d]! === 0) next.push(d);
    }
    ready = next;
  }
  if (order.length < refs.length) {
    const placed = new Set(order);
    const left = refs.flatMap((_, i) => (placed.has(i) ? [] : [i])).sort(byRank);
    const inCycle = new Set(left);
    for (const i of left) waitFor[i] = waitFor[i]!.filter((w) => !inCycle.has(w));
    order.push(...left);
  }
  return order;
}
