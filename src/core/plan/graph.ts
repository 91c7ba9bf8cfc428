/**
 * The package as a dependency graph, one node per object, so that apply can run everything that is
 * independent at once and a failure holds back only what depends on it (cli-utils' graph, kpt's
 * semantics). Edges, from an object to what it needs first:
 * - a custom resource → the CRD in the package that defines its kind (applied, Established, served);
 * - a namespaced object → the Namespace in the package it lives in (applied);
 * - `config.kubernetes.io/depends-on` → each object it names, which must be applied and Current (kpt
 *   waits for reconciliation before applying dependents). A name outside the package must exist in the
 *   cluster; it is then waited on, not applied.
 * Kind order (kind-order.ts) breaks ties: it is the order in which objects ready at the same moment
 * start. Admission webhook configurations (kindsLast) additionally wait until every other object that
 * does not depend on them has been attempted, so a webhook cannot reject the rest of its own package.
 *
 * A cycle, a self-dependency, a malformed annotation or a dependency found nowhere is a validation
 * failure naming each object and the file it came from. Linear in objects and edges (plus a log factor
 * for the tie-break), so a 10,000-object package costs milliseconds.
 */
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';
import { describeRef, groupOf, isRecord, ownField, refKey, refOf, type KubeObject, type ObjectRef } from '../object.ts';
import { formatDependsOn, readDependsOn } from './depends-on.ts';
import { crdRank, kindRank, otherKindsRank } from './kind-order.ts';

export interface GraphNode {
  object: KubeObject;
  ref: ObjectRef;
  key: string;
  /** Package objects that must be applied first: its CRD, its Namespace. */
  needsApplied: number[];
  /** Package objects its depends-on names: applied and Current first. */
  needsHealthy: number[];
  /** Objects that must have been attempted first, whatever their outcome (webhook configurations go last). */
  after: number[];
  /** depends-on names outside the package (they exist in the cluster): Current before this is applied. */
  external: ObjectRef[];
}

export interface DependencyGraph {
  /** In input (render) order. */
  nodes: GraphNode[];
  /** Node indexes in apply order: every object after what it needs, ties broken by kind order, then input order. */
  order: number[];
  /** For each node, the nodes that need it (applied or healthy): what a failure holds back, what teardown deletes first. */
  dependents: number[][];
}

export interface GraphOptions {
  /** refKey → the file the object came from (RenderedPackage.sources), for messages. */
  sources?: ReadonlyMap<string, string>;
  /** Whether an object outside the package exists in the cluster (the engine read it). */
  exists?: (ref: ObjectRef) => boolean;
  /** Whether an object left the package and is about to be pruned: no dependency can rely on it. */
  leaving?: (ref: ObjectRef) => boolean;
}

export function buildGraph(objects: readonly KubeObject[], opts: GraphOptions = {}): Result<DependencyGraph> {
  const nodes: GraphNode[] = objects.map((object) => {
    const ref = refOf(object);
    return { object, ref, key: refKey(ref), needsApplied: [], needsHealthy: [], after: [], external: [] };
  });
  const index = new Map(nodes.map((n, i) => [n.key, i]));
  const where = (i: number) => describeObject(nodes[i]!.ref, opts.sources);
  const problems: string[] = [];
  let firstProblem: ObjectRef | undefined;
  let onlyMissing = true;
  const problem = (i: number, text: string, missing = false) => {
    firstProblem ??= nodes[i]!.ref;
    onlyMissing &&= missing;
    problems.push(`${where(i)} ${text}`);
  };

  const namespaces = new Map<string, number>();
  const crds = new Map<string, number>();
  for (const [i, n] of nodes.entries()) {
    if (n.ref.group === '' && n.ref.kind === 'Namespace') namespaces.set(n.ref.name, i);
    const defined = crdKind(n.object);
    if (defined) crds.set(defined, i);
  }
  let byName: Map<string, number> | undefined; // only needed for a message
  for (const [i, n] of nodes.entries()) {
    const explicit = readDependsOn(n.object);
    if (!explicit.ok) {
      problem(i, `has an invalid config.kubernetes.io/depends-on annotation: ${explicit.failure.message}`);
      continue;
    }
    for (const dep of explicit.value) {
      const j = index.get(refKey(dep));
      if (j === i) problem(i, 'depends on itself (config.kubernetes.io/depends-on)');
      else if (j !== undefined) n.needsHealthy.push(j);
      else if (opts.leaving?.(dep))
        problem(
          i,
          `depends on ${formatDependsOn(dep)}, which left the package and would be pruned; keep it in the package or drop the dependency`,
        );
      else if (opts.exists?.(dep)) n.external.push(dep);
      else
        problem(
          i,
          `depends on ${formatDependsOn(dep)}, which is neither in the package nor in the cluster${hint(dep, (byName ??= nameIndex(nodes)), nodes)}`,
          true,
        );
    }
    const implicit = [
      crds.get(`${n.ref.group}/${n.ref.kind}`),
      n.ref.namespace ? namespaces.get(n.ref.namespace) : undefined,
    ];
    for (const j of implicit) if (j !== undefined && j !== i && !n.needsHealthy.includes(j)) n.needsApplied.push(j);
  }
  if (problems.length > 0) return invalid(problems, firstProblem!, !onlyMissing);

  const dependents: number[][] = nodes.map(() => []);
  for (const [i, n] of nodes.entries()) for (const j of [...n.needsApplied, ...n.needsHealthy]) dependents[j]!.push(i);
  addWebhooksLast(nodes, dependents);

  const rank = rankerFor(objects);
  const order = topologicalOrder(nodes, (i) => rank(nodes[i]!.object));
  if (order.length < nodes.length) {
    const cycle = findCycle(nodes, new Set(order));
    const text = cycle.map(where).join(' → ');
    return invalid(
      [`dependency cycle: ${text} → ${where(cycle[0]!)}; remove one of these dependencies`],
      nodes[cycle[0]!]!.ref,
      true,
    );
  }
  return ok({ nodes, order, dependents });
}

function invalid(problems: string[], object: ObjectRef, terminal: boolean): Result<DependencyGraph> {
  const shown = problems.slice(0, 5).join('; ');
  const more = problems.length > 5 ? `; and ${problems.length - 5} more` : '';
  return fail(Reason.InvalidDependency, `${shown}${more}`, { object, terminal });
}

/** `Deployment/team-a/web (apps/web.yaml)`: the object, and where it came from when known. */
export function describeObject(ref: ObjectRef, sources?: ReadonlyMap<string, string>): string {
  const file = sources?.get(refKey(ref));
  return file ? `${describeRef(ref)} (${file})` : describeRef(ref);
}

/** Kind rank, except that a custom resource whose CRD is in the package ranks after the CRDs. */
export function rankerFor(objects: readonly KubeObject[]): (obj: KubeObject) => number {
  const definedHere = new Set(objects.map(crdKind).filter((k) => k !== undefined));
  return (obj) => {
    const rank = kindRank(obj.kind);
    return rank <= crdRank && definedHere.has(`${groupOf(obj.apiVersion)}/${obj.kind}`) ? otherKindsRank : rank;
  };
}

/** `group/kind` a CRD defines, or undefined when obj is not a CRD. */
function crdKind(obj: KubeObject): string | undefined {
  if (obj.kind !== 'CustomResourceDefinition' || groupOf(obj.apiVersion) !== 'apiextensions.k8s.io') return undefined;
  const spec = ownField(obj, 'spec');
  const names = isRecord(spec) ? ownField(spec, 'names') : undefined;
  const group = isRecord(spec) ? ownField(spec, 'group') : undefined;
  const kind = isRecord(names) ? ownField(names, 'kind') : undefined;
  return typeof group === 'string' && typeof kind === 'string' ? `${group}/${kind}` : undefined;
}

function nameIndex(nodes: readonly GraphNode[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const [i, n] of nodes.entries()) m.set(`${n.ref.group}/${n.ref.kind}/${n.ref.name}`, i);
  return m;
}

/** The most common slip: the right object, the wrong (or missing) namespace in the reference. */
function hint(dep: ObjectRef, byName: Map<string, number>, nodes: readonly GraphNode[]): string {
  const j = byName.get(`${dep.group}/${dep.kind}/${dep.name}`);
  return j === undefined ? '' : ` (the package has ${formatDependsOn(nodes[j]!.ref)})`;
}

/**
 * Webhook configurations wait for every object that does not (transitively) depend on one of them:
 * those that do must come after, and waiting for them would deadlock.
 */
function addWebhooksLast(nodes: GraphNode[], dependents: number[][]): void {
  const last = nodes.flatMap((n, i) => (kindRank(n.ref.kind) > otherKindsRank ? [i] : []));
  if (last.length === 0) return;
  const held = new Set(last);
  const stack = [...last];
  while (stack.length > 0) {
    for (const d of dependents[stack.pop()!]!) {
      if (!held.has(d)) {
        held.add(d);
        stack.push(d);
      }
    }
  }
  const others = nodes.flatMap((_, i) => (held.has(i) ? [] : [i]));
  for (const i of last) nodes[i]!.after = others;
}

/** Kahn's algorithm over every edge kind, the ready set kept in a heap by (rank, input index). */
function topologicalOrder(nodes: readonly GraphNode[], rank: (i: number) => number): number[] {
  const waiting = new Int32Array(nodes.length);
  const released: number[][] = nodes.map(() => []);
  for (const [i, n] of nodes.entries()) {
    for (const j of [...n.needsApplied, ...n.needsHealthy, ...n.after]) {
      waiting[i]!++;
      released[j]!.push(i);
    }
  }
  const ranks = nodes.map((_, i) => rank(i));
  const heap = new MinHeap((a, b) => ranks[a]! - ranks[b]! || a - b);
  for (let i = 0; i < nodes.length; i++) if (waiting[i] === 0) heap.push(i);
  const order: number[] = [];
  for (let i = heap.pop(); i !== undefined; i = heap.pop()) {
    order.push(i);
    for (const d of released[i]!) if (--waiting[d]! === 0) heap.push(d);
  }
  return order;
}

/** One cycle among the nodes the topological sort could not place, in dependency order. */
function findCycle(nodes: readonly GraphNode[], placed: ReadonlySet<number>): number[] {
  // Every unplaced node waits for another unplaced one: walking back from any of them must revisit a
  // node. Real dependencies first, so the cycle shown is one the user wrote when there is one.
  const needs = (i: number) => {
    const n = nodes[i]!;
    const hard = [...n.needsApplied, ...n.needsHealthy].filter((j) => !placed.has(j));
    return hard.length > 0 ? hard : n.after.filter((j) => !placed.has(j));
  };
  let i = nodes.findIndex((_, k) => !placed.has(k));
  const seenAt = new Map<number, number>();
  const path: number[] = [];
  while (i >= 0 && !seenAt.has(i)) {
    seenAt.set(i, path.length);
    path.push(i);
    i = needs(i)[0] ?? -1;
  }
  return i >= 0 ? path.slice(seenAt.get(i)) : path;
}

class MinHeap {
  private readonly items: number[] = [];
  private readonly less: (a: number, b: number) => number;
  constructor(less: (a: number, b: number) => number) {
    this.less = less;
  }
  push(v: number): void {
    const a = this.items;
    a.push(v);
    for (let i = a.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (this.less(a[i]!, a[p]!) >= 0) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): number | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0]!;
    const end = a.pop()!;
    if (a.length > 0) {
      a[0] = end;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l]!, a[m]!) < 0) m = l;
        if (r < a.length && this.less(a[r]!, a[m]!) < 0) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}
