/**
 * A V8 .heapsnapshot (node --heapsnapshot-signal, the inspector) read without a GUI: objects grouped by
 * constructor with their count, shallow size and retained size (the dominator tree, as DevTools computes it),
 * so two snapshots of one process can be compared (bench/heap-summary.ts).
 *
 * The file is parsed by hand: a snapshot of a few hundred MiB is past what one JSON.parse of a string can take,
 * and its nodes and edges are flat integer arrays that fit typed arrays.
 */
import { readFileSync } from 'node:fs';

export interface HeapSnapshot {
  nodeCount: number;
  /** Per node: index into `classes`, shallow size, first edge index, edge count. */
  cls: Uint32Array;
  selfSize: Float64Array;
  firstEdge: Uint32Array;
  /** Per edge: the node it points to, and whether it keeps that node alive (weak edges do not). */
  edgeTo: Uint32Array;
  edgeStrong: Uint8Array;
  /** Per edge: its name (a property name or element index), for retainer paths. */
  edgeName: string[];
  classes: string[];
  /** Per node: its name (a closure's function name, a string's text), as an index into `strings`. */
  name: Uint32Array;
  strings: string[];
}

interface Meta {
  node_fields: string[];
  node_types: [string[], ...unknown[]];
  edge_fields: string[];
  edge_types: [string[], ...unknown[]];
}

/** DevTools' grouping: objects by constructor, the rest by kind. */
function classOf(type: string, name: string): string {
  switch (type) {
    case 'object':
    case 'native':
      return name || `(${type})`;
    case 'closure':
      return '(closure)';
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    case 'hidden':
    case 'object shape':
      return '(system)';
    case 'code':
      return '(compiled code)';
    case 'array':
      return `(array) ${name}`.trimEnd();
    default:
      return `(${type})`;
  }
}

/** Reads `count` comma-separated unsigned integers from `buf` starting at `at` (just after the `[`). */
function readInts(buf: Buffer, at: number, count: number): { values: Float64Array; end: number } {
  const values = new Float64Array(count);
  let i = 0;
  let n = 0;
  let inNumber = false;
  let p = at;
  for (; p < buf.length; p++) {
    const c = buf[p]!;
    if (c >= 48 && c <= 57) {
      n = n * 10 + (c - 48);
      inNumber = true;
    } else {
      if (inNumber) values[i++] = n;
      n = 0;
      inNumber = false;
      if (c === 93) break; // ]
    }
  }
  if (i !== count) throw new Error(`expected ${count} numbers, read ${i}`);
  return { values, end: p + 1 };
}

export function parseHeapSnapshot(buf: Buffer): HeapSnapshot {
  const nodesAt = buf.indexOf('"nodes":[');
  const head = JSON.parse(`${buf.subarray(0, nodesAt).toString('utf8').replace(/,\s*$/, '')}}`) as {
    snapshot: { meta: Meta; node_count: number; edge_count: number };
  };
  const { meta, node_count: nodeCount, edge_count: edgeCount } = head.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const nodes = readInts(buf, nodesAt + '"nodes":['.length, nodeCount * nf);
  const edgesAt = buf.indexOf('"edges":[', nodes.end);
  const edges = readInts(buf, edgesAt + '"edges":['.length, edgeCount * ef);
  const stringsAt = buf.indexOf('"strings":[', edges.end);
  const tail = buf.subarray(stringsAt + '"strings":'.length, buf.lastIndexOf(']') + 1).toString('utf8');
  const strings = JSON.parse(tail) as string[];

  const nType = meta.node_fields.indexOf('type');
  const nName = meta.node_fields.indexOf('name');
  const nSize = meta.node_fields.indexOf('self_size');
  const nEdges = meta.node_fields.indexOf('edge_count');
  const eType = meta.edge_fields.indexOf('type');
  const eName = meta.edge_fields.indexOf('name_or_index');
  const eTo = meta.edge_fields.indexOf('to_node');
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const weak = edgeTypes.indexOf('weak');
  const shortcut = edgeTypes.indexOf('shortcut');
  const named = new Set(['context', 'property', 'internal', 'shortcut'].map((t) => edgeTypes.indexOf(t)));

  const classIndex = new Map<string, number>();
  const classes: string[] = [];
  const cls = new Uint32Array(nodeCount);
  const selfSize = new Float64Array(nodeCount);
  const firstEdge = new Uint32Array(nodeCount + 1);
  const nameOf = new Uint32Array(nodeCount);
  let e = 0;
  for (let i = 0; i < nodeCount; i++) {
    const base = i * nf;
    const name = classOf(nodeTypes[nodes.values[base + nType]!]!, strings[nodes.values[base + nName]!]!);
    let c = classIndex.get(name);
    if (c === undefined) classIndex.set(name, (c = classes.push(name) - 1));
    cls[i] = c;
    nameOf[i] = nodes.values[base + nName]!;
    selfSize[i] = nodes.values[base + nSize]!;
    firstEdge[i] = e;
    e += nodes.values[base + nEdges]!;
  }
  firstEdge[nodeCount] = e;
  const edgeTo = new Uint32Array(edgeCount);
  const edgeStrong = new Uint8Array(edgeCount);
  const edgeName: string[] = new Array<string>(edgeCount);
  for (let j = 0; j < edgeCount; j++) {
    const base = j * ef;
    const t = edges.values[base + eType]!;
    const n = edges.values[base + eName]!;
    edgeTo[j] = edges.values[base + eTo]! / nf;
    // shortcut edges (the synthetic root's links into (GC roots)) are not retaining paths in DevTools either
    edgeStrong[j] = t === weak || t === shortcut ? 0 : 1;
    edgeName[j] = named.has(t) ? strings[n]! : `[${n}]`;
  }
  return { nodeCount, cls, selfSize, firstEdge, edgeTo, edgeStrong, edgeName, classes, name: nameOf, strings };
}

export const readHeapSnapshot = (file: string): HeapSnapshot => parseHeapSnapshot(readFileSync(file));

/**
 * The immediate dominator of every node reachable from the root (node 0) over strong edges; unreachable nodes
 * get 0xffffffff. Cooper, Harvey & Kennedy's iterative algorithm on a reverse post-order.
 */
export function dominators(s: HeapSnapshot): Uint32Array {
  const n = s.nodeCount;
  const NONE = 0xffffffff;
  // post-order by an iterative depth-first walk
  const order = new Uint32Array(n); // post-order index → node
  const rank = new Uint32Array(n).fill(NONE); // node → post-order index
  const visited = new Uint8Array(n);
  const stack = new Uint32Array(n);
  const cursor = new Uint32Array(n);
  let top = 0;
  let post = 0;
  stack[top++] = 0;
  visited[0] = 1;
  cursor[0] = s.firstEdge[0]!;
  while (top > 0) {
    const v = stack[top - 1]!;
    let pushed = false;
    while (cursor[v]! < s.firstEdge[v + 1]!) {
      const j = cursor[v]!++;
      if (!s.edgeStrong[j]) continue;
      const w = s.edgeTo[j]!;
      if (visited[w]) continue;
      visited[w] = 1;
      cursor[w] = s.firstEdge[w]!;
      stack[top++] = w;
      pushed = true;
      break;
    }
    if (!pushed) {
      top--;
      rank[v] = post;
      order[post++] = v;
    }
  }
  // predecessors (strong edges between reachable nodes), as a CSR array
  const predCount = new Uint32Array(n + 1);
  for (let v = 0; v < n; v++) {
    if (rank[v] === NONE) continue;
    for (let j = s.firstEdge[v]!; j < s.firstEdge[v + 1]!; j++)
      if (s.edgeStrong[j] && rank[s.edgeTo[j]!] !== NONE) predCount[s.edgeTo[j]! + 1]!++;
  }
  for (let v = 0; v < n; v++) predCount[v + 1]! += predCount[v]!;
  const predFill = predCount.slice(0, n);
  const preds = new Uint32Array(predCount[n]!);
  for (let v = 0; v < n; v++) {
    if (rank[v] === NONE) continue;
    for (let j = s.firstEdge[v]!; j < s.firstEdge[v + 1]!; j++)
      if (s.edgeStrong[j] && rank[s.edgeTo[j]!] !== NONE) preds[predFill[s.edgeTo[j]!]!++] = v;
  }
  // idom by post-order rank; the root's rank is post - 1
  const idom = new Uint32Array(n).fill(NONE);
  const rootRank = post - 1;
  idom[rootRank] = rootRank;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (a < b) a = idom[a]!;
      while (b < a) b = idom[b]!;
    }
    return a;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (let r = rootRank - 1; r >= 0; r--) {
      const v = order[r]!;
      let d = NONE;
      for (let k = predCount[v]!; k < predCount[v + 1]!; k++) {
        const pr = rank[preds[k]!]!;
        if (idom[pr] === NONE) continue;
        d = d === NONE ? pr : intersect(pr, d);
      }
      if (d !== NONE && idom[r] !== d) {
        idom[r] = d;
        changed = true;
      }
    }
  }
  const byNode = new Uint32Array(n).fill(NONE);
  for (let r = 0; r < post; r++) byNode[order[r]!] = order[idom[r]!]!;
  byNode[0] = 0;
  return byNode;
}

export interface ClassSummary {
  name: string;
  count: number;
  selfBytes: number;
  /** What would be freed with every object of the class (nested ones of the same class counted once). */
  retainedBytes: number;
}

export interface HeapSummary {
  totalBytes: number;
  byClass: Map<string, ClassSummary>;
  /** Retained size per node (reachable ones). */
  retained: Float64Array;
  idom: Uint32Array;
}

export function summarise(s: HeapSnapshot): HeapSummary {
  const n = s.nodeCount;
  const idom = dominators(s);
  const NONE = 0xffffffff;
  // retained sizes: children before parents, so walk a pre-order of the dominator tree backwards
  const childCount = new Uint32Array(n + 1);
  for (let v = 1; v < n; v++) if (idom[v] !== NONE) childCount[idom[v]! + 1]!++;
  for (let v = 0; v < n; v++) childCount[v + 1]! += childCount[v]!;
  const fill = childCount.slice(0, n);
  const children = new Uint32Array(childCount[n]!);
  for (let v = 1; v < n; v++) if (idom[v] !== NONE) children[fill[idom[v]!]!++] = v;
  const pre = new Uint32Array(n);
  let len = 0;
  const stack = [0];
  while (stack.length) {
    const v = stack.pop()!;
    pre[len++] = v;
    for (let k = childCount[v]!; k < childCount[v + 1]!; k++) stack.push(children[k]!);
  }
  const retained = new Float64Array(n);
  for (let i = len - 1; i >= 0; i--) {
    const v = pre[i]!;
    retained[v]! += s.selfSize[v]!;
    if (v !== 0) retained[idom[v]!]! += retained[v]!;
  }
  // per class: retained of its objects that no object of the same class dominates (DevTools' figure)
  const byClass = new Map<string, ClassSummary>();
  const open = new Uint32Array(s.classes.length);
  const entry = (c: number) => {
    const name = s.classes[c]!;
    let e = byClass.get(name);
    if (!e) byClass.set(name, (e = { name, count: 0, selfBytes: 0, retainedBytes: 0 }));
    return e;
  };
  // an explicit enter/leave walk: a class counts once per outermost object
  const walk: number[] = [0];
  while (walk.length) {
    const x = walk.pop()!;
    if (x < 0) {
      open[s.cls[~x]!]!--;
      continue;
    }
    const c = s.cls[x]!;
    const e = entry(c);
    e.count++;
    e.selfBytes += s.selfSize[x]!;
    if (open[c] === 0) e.retainedBytes += retained[x]!;
    open[c]!++;
    walk.push(~x);
    for (let k = childCount[x]!; k < childCount[x + 1]!; k++) walk.push(children[k]!);
  }
  return { totalBytes: retained[0]!, byClass, retained, idom };
}

/** The dominator chain of a node as class names, root last: what keeps it alive. */
export function dominatorPath(s: HeapSnapshot, idom: Uint32Array, v: number, max = 8): string[] {
  const out: string[] = [];
  for (let x = v; x !== 0 && out.length < max; x = idom[x]!) {
    const d = idom[x]!;
    let via = '';
    for (let j = s.firstEdge[d]!; j < s.firstEdge[d + 1]!; j++)
      if (s.edgeTo[j] === x) {
        via = `.${s.edgeName[j]}`;
        break;
      }
    if (!via) via = directRetainer(s, x);
    out.push(`${s.classes[s.cls[x]!]}${via ? ` (${via.slice(1)})` : ''}`);
  }
  return out;
}

/** `.name of Class` for the first strong edge into `v` (a scan: for the few nodes a summary prints). */
function directRetainer(s: HeapSnapshot, v: number): string {
  for (let u = 0; u < s.nodeCount; u++)
    for (let j = s.firstEdge[u]!; j < s.firstEdge[u + 1]!; j++)
      if (s.edgeTo[j] === v && s.edgeStrong[j]) return `.${s.edgeName[j]} of ${s.classes[s.cls[u]!]}`;
  return '';
}
