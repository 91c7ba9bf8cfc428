/**
 * The objects of a PackageSync as a graph (the server lays it out: src/cli/ui/package-graph.ts): columns in apply
 * order, left to right, solid edges for what must be applied first (CRD, Namespace), dashed for depends-on, grey for
 * what a workload owns; each node coloured by health and a link to the object's page. SVG with text nodes only.
 */
import type { GraphNodeView, PackageSyncDetail } from './api.ts';
import { kindOf, objectHref } from './format.ts';

const W = 210;
const H = 46;
const GAP_X = 56;
const GAP_Y = 12;
const PAD = 4;

const x = (n: GraphNodeView) => PAD + n.column * (W + GAP_X);
const y = (n: GraphNodeView) => PAD + n.row * (H + GAP_Y);
const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

export function Graph({ d }: { d: PackageSyncDetail }) {
  const { nodes, edges, columns, rows, notes } = d.graph;
  if (nodes.length === 0) return <p>No objects in the inventory yet.</p>;
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const width = PAD * 2 + columns * W + (columns - 1) * GAP_X;
  const height = PAD * 2 + rows * H + (rows - 1) * GAP_Y;
  return (
    <>
      <div class="graph-scroll">
        <svg
          class="graph"
          width={width}
          height={height}
          viewBox={`0 0 ${width} ${height}`}
          role="group"
          aria-label="Objects in apply order, with what each needs and what it owns"
        >
          <defs>
            <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto">
              <path d="M0,0 L10,5 L0,10 z" class="arrowhead" />
            </marker>
          </defs>
          {edges.map((e) => {
            const a = byId.get(e.from);
            const b = byId.get(e.to);
            if (!a || !b) return null;
            const [x1, y1, x2, y2] = [x(a) + W, y(a) + H / 2, x(b), y(b) + H / 2];
            const mid = (x1 + x2) / 2;
            return (
              <path
                key={`${e.from}>${e.to}`}
                class={`edge edge-${e.kind}`}
                d={`M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`}
              />
            );
          })}
          {nodes.map((n) => (
            // named by its <title> (SVG's own way), described by its health message in <desc>
            <a key={n.id} href={objectHref(d, n)} class="node">
              <title>{label(n)}</title>
              {n.message && <desc>{n.message}</desc>}
              <rect x={x(n)} y={y(n)} width={W} height={H} rx="6" class={`node-box health-${n.health}`} />
              <text x={x(n) + 8} y={y(n) + 18} class="node-kind">
                {cut(`${n.order ? `${n.order}. ` : ''}${kindOf(n)}`, 30)}
              </text>
              <text x={x(n) + 8} y={y(n) + 36} class="node-name">
                {cut(n.name, 30)}
              </text>
            </a>
          ))}
        </svg>
      </div>
      <p class="legend">
        Left to right in apply order. <span class="key key-needs">applied first</span>{' '}
        <span class="key key-dependsOn">depends-on: Current first</span> <span class="key key-owner">owns</span>
      </p>
      {notes.length > 0 && (
        <ul class="muted">
          {notes.map((note, i) => (
            <li key={i}>{note}</li>
          ))}
        </ul>
      )}
    </>
  );
}

/** `Deployment team-a/web: Current, applied 3rd`: what a screen reader and the tooltip say of a node. */
function label(n: GraphNodeView): string {
  const where = `${kindOf(n)} ${n.namespace ? `${n.namespace}/` : ''}${n.name}`;
  return `${where}: ${n.health}${n.order ? `, applied ${ordinal(n.order)}` : ''}`;
}

function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10];
  return `${n}${s ?? 'th'}`;
}
