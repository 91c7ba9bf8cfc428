/**
 * A PackageSync's objects as the graph its page draws: one node per inventory object, placed in columns by the
 * dependency graph the apply itself follows (core/plan/graph.ts on the live objects: CRD → its resources,
 * Namespace → its objects, `config.kubernetes.io/depends-on`), numbered in apply order; then what the workloads
 * own (ReplicaSets, Pods: ownerReferences), each a column to the right of its owner. Every node carries its live
 * health. Pure: the objects come in, positions and edges go out; the browser only draws them.
 */
import { computeHealth, type HealthStatus } from '../../core/health/index.ts';
import { refKey, refOf, type KubeObject, type ObjectRef } from '../../core/object.ts';
import { buildGraph } from '../../core/plan/graph.ts';
import type { GraphEdgeView, GraphNodeView, GraphView } from './api-types.ts';

export interface GraphItem {
  ref: ObjectRef;
  /** Undefined when not read (a Secret) or not found. */
  live?: KubeObject;
  health: HealthStatus;
  reason?: string;
  message: string;
}

/** Owned objects drawn at most (a Deployment of 300 replicas is 300 Pods: the rest are counted). */
export const MAX_OWNED_NODES = 120;

export function packageGraph(items: readonly GraphItem[], owned: readonly KubeObject[]): GraphView {
  const nodes: GraphNodeView[] = [];
  const edges: GraphEdgeView[] = [];
  const byKey = new Map<string, GraphNodeView>();
  const add = (ref: ObjectRef, h: Omit<GraphItem, 'ref' | 'live'>, extra: Partial<GraphNodeView>) => {
    const node: GraphNodeView = {
      id: refKey(ref),
      ...ref,
      health: h.health,
      ...(h.reason ? { reason: h.reason } : {}),
      message: h.message,
      column: 0,
      row: 0,
      owned: false,
      ...extra,
    };
    nodes.push(node);
    byKey.set(node.id, node);
    return node;
  };

  // the package's objects, in apply order, each a column right of everything it needs; an object not read (a
  // Secret) or not found takes its place by kind, as the apply would give it
  const graph = buildGraph(
    items.map((i) => i.live ?? stub(i.ref)),
    { exists: () => true },
  );
  const notes: string[] = [];
  if (graph.ok) {
    const column = new Map<number, number>();
    graph.value.order.forEach((index, position) => {
      const g = graph.value.nodes[index]!;
      const item = items[index]!;
      const needs = [...g.needsApplied, ...g.needsHealthy];
      const col = Math.max(0, ...needs.map((n) => (column.get(n) ?? 0) + 1));
      column.set(index, col);
      add(item.ref, item, { column: col, order: position + 1 });
      for (const n of g.needsApplied) edges.push({ from: refKey(items[n]!.ref), to: refKey(item.ref), kind: 'needs' });
      for (const n of g.needsHealthy)
        edges.push({ from: refKey(items[n]!.ref), to: refKey(item.ref), kind: 'dependsOn' });
    });
  } else {
    notes.push(`no apply order: ${graph.failure.message}`);
    items.forEach((item, i) => add(item.ref, item, { order: i + 1 }));
  }

  // what the workloads own, found by uid, one level at a time (Deployment → ReplicaSet → Pod)
  const uidToKey = new Map<string, string>();
  for (const i of items) if (i.live?.metadata.uid) uidToKey.set(i.live.metadata.uid, refKey(i.ref));
  let pending = owned.filter((o) => o.metadata.uid && !uidToKey.has(o.metadata.uid));
  let drawn = 0;
  let left = 0;
  for (let depth = 0; depth < 3 && pending.length > 0; depth++) {
    const next: KubeObject[] = [];
    for (const o of [...pending].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
      const ownerRefs = (o.metadata.ownerReferences ?? []) as { uid?: string; controller?: boolean }[];
      const owner = ownerRefs.find((r) => r.controller && r.uid && uidToKey.has(r.uid));
      if (!owner) {
        next.push(o);
        continue;
      }
      if (drawn >= MAX_OWNED_NODES) {
        left++;
        continue;
      }
      const parent = byKey.get(uidToKey.get(owner.uid!)!)!;
      const ref = refOf(o);
      const h = computeHealth(o);
      add(
        ref,
        { health: h.status, reason: h.reason, message: h.message ?? '' },
        { column: parent.column + 1, owned: true, parent: parent.id },
      );
      edges.push({ from: parent.id, to: refKey(ref), kind: 'owner' });
      uidToKey.set(o.metadata.uid!, refKey(ref));
      drawn++;
    }
    if (next.length === pending.length) break;
    pending = next;
  }
  if (left > 0) notes.push(`${left} more owned objects not drawn`);

  // rows: each column in apply order; owned objects beside their owner's row
  const columns = Math.max(0, ...nodes.map((n) => n.column)) + 1;
  let rows = 0;
  for (let c = 0; c < columns; c++) {
    const here = nodes.filter((n) => n.column === c);
    const rank = (n: GraphNodeView) => (n.parent ? byKey.get(n.parent)!.row : -1);
    here.sort(
      (a, b) =>
        rank(a) - rank(b) ||
        (a.order ?? Number.MAX_SAFE_INTEGER) - (b.order ?? Number.MAX_SAFE_INTEGER) ||
        a.name.localeCompare(b.name),
    );
    let row = 0;
    for (const n of here) {
      row = Math.max(row, rank(n));
      n.row = row++;
    }
    rows = Math.max(rows, row);
  }
  return { nodes, edges, columns, rows, notes };
}

/** An object known by its reference only: enough for kind order and the Namespace and CRD edges. */
function stub(ref: ObjectRef): KubeObject {
  return {
    apiVersion: ref.group ? `${ref.group}/v1` : 'v1',
    kind: ref.kind,
    metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
  };
}
