import { describe, expect, it } from 'vitest';
import { dominatorPath, parseHeapSnapshot, summarise } from '../../bench/lib/heap-snapshot.ts';

/** A .heapsnapshot as V8 writes it, from nodes [type, name, size] and edges [from, type, name, to]. */
function snapshotOf(nodes: [string, string, number][], edges: [number, string, string, number][]): Buffer {
  const nodeTypes = [
    'hidden',
    'array',
    'string',
    'object',
    'code',
    'closure',
    'regexp',
    'number',
    'native',
    'synthetic',
  ];
  const edgeTypes = ['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak'];
  const strings: string[] = [];
  const str = (s: string) => (strings.includes(s) ? strings.indexOf(s) : strings.push(s) - 1);
  const nf = 7;
  const flatNodes = nodes.flatMap(([type, name, size], i) => [
    nodeTypes.indexOf(type),
    str(name),
    i * 2 + 1,
    size,
    edges.filter((e) => e[0] === i).length,
    0,
    0,
  ]);
  const flatEdges = [...edges]
    .sort((a, b) => a[0] - b[0])
    .flatMap(([, type, name, to]) => [
      edgeTypes.indexOf(type),
      type === 'element' || type === 'hidden' ? Number(name) : str(name), // V8 writes an index there
      to * nf,
    ]);
  const head = {
    snapshot: {
      meta: {
        node_fields: ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id', 'detachedness'],
        node_types: [nodeTypes, 'string', 'number', 'number', 'number', 'number', 'number'],
        edge_fields: ['type', 'name_or_index', 'to_node'],
        edge_types: [edgeTypes, 'string_or_number', 'node'],
      },
      node_count: nodes.length,
      edge_count: edges.length,
    },
  };
  const json = `${JSON.stringify(head).slice(0, -1)},\n"nodes":[${flatNodes.join(',')}],\n"edges":[${flatEdges.join(',\n')}],\n"trace_function_infos":[],"trace_tree":[],"samples":[],"locations":[],\n"strings":${JSON.stringify(strings)}}`;
  return Buffer.from(json);
}

describe('heap snapshot summary', () => {
  // root → A (Holder 3) → B (Leaf 10), A → E (Holder 7); A → C (Leaf 20) and root → D (Other 5) → C; D ⇢ B weak
  const buf = snapshotOf(
    [
      ['synthetic', '', 0],
      ['object', 'Holder', 3],
      ['object', 'Leaf', 10],
      ['object', 'Leaf', 20],
      ['object', 'Other', 5],
      ['object', 'Holder', 7],
    ],
    [
      [0, 'element', '1', 1],
      [0, 'element', '2', 4],
      [1, 'property', 'b', 2],
      [1, 'property', 'c', 3],
      [1, 'property', 'inner', 5],
      [4, 'property', 'c', 3],
      [4, 'weak', 'b', 2],
    ],
  );

  it('computes retained sizes over the dominator tree, weak edges keeping nothing alive', () => {
    const s = parseHeapSnapshot(buf);
    const sum = summarise(s);
    expect(sum.totalBytes).toBe(45);
    expect([...sum.retained]).toEqual([45, 20, 10, 20, 5, 7]);
    expect(sum.idom[3]).toBe(0); // C is held by both A and D: only the root dominates it
    expect(dominatorPath(s, sum.idom, 2)).toEqual(['Leaf (b)', 'Holder ([1])']);
  });

  it('groups by constructor, counting an object nested in one of its own class once', () => {
    const sum = summarise(parseHeapSnapshot(buf));
    expect(sum.byClass.get('Holder')).toEqual({ name: 'Holder', count: 2, selfBytes: 10, retainedBytes: 20 });
    expect(sum.byClass.get('Leaf')).toEqual({ name: 'Leaf', count: 2, selfBytes: 30, retainedBytes: 30 });
  });
});
