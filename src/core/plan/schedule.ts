/**
 * Best-effort apply over the dependency graph, as a pure state machine: the engine reports what
 * happened to each object, the schedule answers which objects may start now and which must be skipped.
 * - An object starts once everything it needs is applied (its CRD, its Namespace) or Current (its
 *   depends-on), and everything it is ordered after has been attempted.
 * - A failed object holds back only its dependents, transitively: they are skipped, each naming the
 *   dependency that held it back. Everything else carries on.
 * Objects are handed out in the graph's apply order, so kind order breaks ties among those ready at once.
 */
import type { DependencyGraph } from './graph.ts';

export type NodeState = 'waiting' | 'ready' | 'started' | 'applied' | 'healthy' | 'failed' | 'skipped';

export interface Skip {
  node: number;
  /** The dependency that held it back: failed, or itself skipped. */
  because: number;
}

export class ApplySchedule {
  private readonly graph: DependencyGraph;
  private readonly state: NodeState[];
  /** Edges not yet satisfied, per node. */
  private readonly pending: Int32Array;
  private readonly position: Int32Array;
  private readonly appliedReleases: number[][];
  private readonly healthyReleases: number[][];
  private readonly settledReleases: number[][];
  private ready: number[] = [];
  private open: number;

  constructor(graph: DependencyGraph) {
    this.graph = graph;
    const n = graph.nodes.length;
    this.state = new Array<NodeState>(n).fill('waiting');
    this.pending = new Int32Array(n);
    this.position = new Int32Array(n);
    for (const [pos, i] of graph.order.entries()) this.position[i] = pos;
    this.appliedReleases = graph.nodes.map(() => []);
    this.healthyReleases = graph.nodes.map(() => []);
    this.settledReleases = graph.nodes.map(() => []);
    for (const [i, node] of graph.nodes.entries()) {
      this.pending[i] = node.needsApplied.length + node.needsHealthy.length + node.after.length;
      for (const j of node.needsApplied) this.appliedReleases[j]!.push(i);
      for (const j of node.needsHealthy) this.healthyReleases[j]!.push(i);
      for (const j of node.after) this.settledReleases[j]!.push(i);
    }
    this.open = n;
    for (let i = 0; i < n; i++) if (this.pending[i] === 0) this.markReady(i);
  }

  /** Objects that may start now, in apply order; each is handed out once. */
  take(): number[] {
    const out = this.ready.sort((a, b) => this.position[a]! - this.position[b]!);
    this.ready = [];
    for (const i of out) this.state[i] = 'started';
    return out;
  }

  /** True when some object's dependents wait for it to be Current, not only applied. */
  needsHealth(i: number): boolean {
    return this.healthyReleases[i]!.length > 0;
  }

  stateOf(i: number): NodeState {
    return this.state[i]!;
  }

  /** Applied (or unchanged): what needs it applied may start. */
  applied(i: number): void {
    this.state[i] = 'applied';
    this.release(this.appliedReleases[i]!);
    this.release(this.settledReleases[i]!);
    if (!this.needsHealth(i)) this.open--;
  }

  /** Current: what names it in depends-on may start. */
  healthy(i: number): void {
    this.state[i] = 'healthy';
    this.release(this.healthyReleases[i]!);
    if (this.needsHealth(i)) this.open--;
  }

  /**
   * Failed to apply, or (once applied) did not become Current for its depends-on dependents. Returns the
   * objects skipped because of it, transitively, in apply order.
   */
  failed(i: number): Skip[] {
    const wasApplied = this.state[i] === 'applied';
    this.state[i] = 'failed';
    if (!wasApplied || this.needsHealth(i)) this.open--;
    if (!wasApplied) this.release(this.settledReleases[i]!);
    const skips: Skip[] = [];
    const stack: Skip[] = (wasApplied ? this.healthyReleases[i]! : this.dependentsOf(i)).map((d) => ({
      node: d,
      because: i,
    }));
    while (stack.length > 0) {
      const s = stack.pop()!;
      const st = this.state[s.node];
      if (st !== 'waiting' && st !== 'ready') continue; // already settled or under way: not held by this
      if (st === 'ready') this.ready = this.ready.filter((r) => r !== s.node);
      this.state[s.node] = 'skipped';
      this.open--;
      skips.push(s);
      this.release(this.settledReleases[s.node]!);
      for (const d of this.dependentsOf(s.node)) stack.push({ node: d, because: s.node });
    }
    return skips.sort((a, b) => this.position[a.node]! - this.position[b.node]!);
  }

  /** Every object applied (and Current where that was asked), failed or skipped. */
  done(): boolean {
    return this.open === 0;
  }

  private dependentsOf(i: number): number[] {
    return this.graph.dependents[i]!;
  }

  private release(list: readonly number[]): void {
    for (const d of list) if (--this.pending[d]! === 0 && this.state[d] === 'waiting') this.markReady(d);
  }

  private markReady(i: number): void {
    this.state[i] = 'ready';
    this.ready.push(i);
  }
}
