/**
 * `packagesync plan` as data: what each object's server-side dry run answered, put in dependency-graph
 * order, with what a failure would hold back (the apply schedule itself decides that: schedule.ts), the
 * prunes, and a digest that names this exact plan. Pure: the engine ran the dry runs and read the live
 * copies; this decides what they mean. The JSON schema is a contract (docs/cli.md#plan).
 */
import { canonicalJson, sha256Hex } from '../render/canonical.ts';
import { describeRef, refKey, type KubeObject, type ObjectRef } from '../object.ts';
import type { FieldChange } from './field-changes.ts';
import type { DependencyGraph } from './graph.ts';
import { mayPrune, type Owner } from './ownership.ts';
import { ApplySchedule } from './schedule.ts';

/** One field another manager owns, from a dry run's 409. */
export interface FieldConflict {
  manager: string;
  field: string;
}

/** What the dry run of one object answered, classified (engine/plan-dry-run.ts). */
export type DryRunOutcome =
  | { kind: 'unchanged' }
  | { kind: 'create' }
  | { kind: 'update'; changes: FieldChange[]; rolls: boolean }
  | { kind: 'conflict'; conflicts: FieldConflict[]; message: string }
  | { kind: 'immutable'; fields: string[]; message: string }
  | { kind: 'reject'; message: string };

export type PlanActionType =
  'create' | 'update' | 'recreate' | 'conflict' | 'reject' | 'immutable' | 'skip' | 'prune' | 'keep';

export interface PlanAction {
  action: PlanActionType;
  /** `Deployment/team-a/web`, as every message names objects. */
  id: string;
  object: ObjectRef;
  /** The file it came from (to apply) or nothing (to prune). */
  file?: string;
  /** update: the fields that change, Secret values masked. */
  changes?: FieldChange[];
  /** update: a Pod template changes, so the workload's Pods are replaced. */
  rolls?: boolean;
  conflicts?: FieldConflict[];
  /** immutable / recreate: the fields that cannot change in place. */
  fields?: string[];
  /** conflict / reject / immutable / keep: the API server's or the planner's words. */
  message?: string;
  /** skip: the object it depends on that would fail (or be skipped itself). */
  dependsOn?: string;
}

export interface PruneCandidate {
  ref: ObjectRef;
  /** Why it stays (prune disabled, not ours, a protected kind, spec.prune false); undefined: pruned. */
  keep?: string;
}

export interface PlanInput {
  graph: DependencyGraph;
  /** Node index → its dry run; a node without one needs no apply. */
  outcomes: ReadonlyMap<number, DryRunOutcome>;
  /** spec.force: an immutable change is a delete and create, not a failure. */
  force: boolean;
  /** refKeys opted in to that one by one (packagesync.io/recreate: ChangePlan.recreate). */
  recreate?: ReadonlySet<string>;
  prunes: readonly PruneCandidate[];
  /** The render's digest (RenderedPackage.digest): the content of every object to apply. */
  renderDigest: string;
  /** The prune budget's verdict (a PackageSync's spec.pruneBudget); undefined: none applies. */
  pruneBudget?: { exceeded: boolean; message?: string };
  sources?: ReadonlyMap<string, string>;
}

export type PlanSummary = Record<PlanActionType | 'unchanged' | 'rolls', number>;

export interface Plan {
  renderDigest: string;
  actions: PlanAction[];
  summary: PlanSummary;
  /** The apply would fail (conflict, rejection, immutable change, skipped dependents) or the budget stops it. */
  wouldFail: boolean;
  /** Prunes only run after a fully successful apply: listed, but this run would delete nothing. */
  prunesBlocked: boolean;
  pruneBudget?: { exceeded: boolean; message?: string };
  /** sha256 over renderDigest and the ordered actions (never times, messages or counts of unchanged). */
  digest: string;
}

const FAILING: ReadonlySet<PlanActionType> = new Set(['conflict', 'reject', 'immutable', 'skip']);

export function buildPlan(input: PlanInput): Plan {
  const { graph } = input;
  const mayRecreate = (i: number) => input.force || (input.recreate?.has(graph.nodes[i]!.key) ?? false);
  const failing = new Set<number>();
  for (const [i, o] of input.outcomes) {
    if (o.kind === 'conflict' || o.kind === 'reject' || (o.kind === 'immutable' && !mayRecreate(i))) failing.add(i);
  }
  const skipped = gatedBy(graph, failing);
  const actions: PlanAction[] = [];
  let unchanged = 0;
  for (const i of graph.order) {
    const node = graph.nodes[i]!;
    const base = { id: describeRef(node.ref), object: node.ref, ...fileOf(node.key, input.sources) };
    const because = skipped.get(i);
    if (because !== undefined) {
      actions.push({ action: 'skip', ...base, dependsOn: describeRef(graph.nodes[because]!.ref) });
      continue;
    }
    const o = input.outcomes.get(i) ?? { kind: 'unchanged' };
    switch (o.kind) {
      case 'unchanged':
        unchanged++;
        break;
      case 'create':
        actions.push({ action: 'create', ...base });
        break;
      case 'update':
        actions.push({ action: 'update', ...base, changes: o.changes, ...(o.rolls ? { rolls: true } : {}) });
        break;
      case 'conflict':
        actions.push({ action: 'conflict', ...base, conflicts: o.conflicts, message: o.message });
        break;
      case 'reject':
        actions.push({ action: 'reject', ...base, message: o.message });
        break;
      case 'immutable':
        actions.push({
          action: mayRecreate(i) ? 'recreate' : 'immutable',
          ...base,
          fields: o.fields,
          message: o.message,
        });
        break;
    }
  }
  for (const p of input.prunes) {
    const base = { id: describeRef(p.ref), object: p.ref };
    actions.push(p.keep === undefined ? { action: 'prune', ...base } : { action: 'keep', ...base, message: p.keep });
  }
  const summary = summarize(actions, unchanged);
  const applyFails = actions.some((a) => FAILING.has(a.action));
  const budgetStops = input.pruneBudget?.exceeded ?? false;
  return {
    renderDigest: input.renderDigest,
    actions,
    summary,
    wouldFail: applyFails || budgetStops,
    prunesBlocked: (applyFails || budgetStops) && summary.prune > 0,
    ...(input.pruneBudget ? { pruneBudget: input.pruneBudget } : {}),
    digest: planDigest(input.renderDigest, actions),
  };
}

/** True when applying would change something in the cluster. */
export function hasPlannedChanges(plan: Plan): boolean {
  return plan.actions.some((a) => a.action !== 'keep');
}

/**
 * The plan's identity: the render's digest and every action in order, with the fields that change and what
 * blocks what. Free-text messages stay out (a server may reword them); so do object counts that change nothing.
 */
export function planDigest(renderDigest: string, actions: readonly PlanAction[]): string {
  const content = actions.map((a) => ({
    action: a.action,
    object: a.object,
    changes: a.changes,
    rolls: a.rolls,
    conflicts: a.conflicts,
    fields: a.fields,
    dependsOn: a.dependsOn,
  }));
  return `sha256:${sha256Hex(canonicalJson({ renderDigest, actions: content }))}`;
}

/**
 * What the apply schedule would skip if the failing nodes failed: node → the dependency that held it back.
 * Everything else is taken to apply and become Current (a dry run cannot tell whether it will be healthy).
 */
export function gatedBy(graph: DependencyGraph, failing: ReadonlySet<number>): Map<number, number> {
  const schedule = new ApplySchedule(graph);
  const skipped = new Map<number, number>();
  for (let batch = schedule.take(); batch.length > 0; batch = schedule.take()) {
    for (const i of batch) {
      if (failing.has(i)) {
        for (const s of schedule.failed(i)) skipped.set(s.node, s.because);
        continue;
      }
      schedule.applied(i);
      if (schedule.needsHealth(i)) schedule.healthy(i);
    }
  }
  return skipped;
}

/**
 * What the prune step would do with each object that left the package (ChangePlan.prune, .released), as
 * engine/prune.ts decides it: only what still carries this owner's labels and has not opted out is deleted.
 * One already gone is not listed.
 */
export function pruneCandidates(
  plan: { prune: readonly ObjectRef[]; released: readonly ObjectRef[] },
  live: ReadonlyMap<string, KubeObject>,
  owner: Owner,
  enabled: boolean,
): PruneCandidate[] {
  const out: PruneCandidate[] = [];
  for (const ref of plan.prune) {
    const copy = live.get(refKey(ref));
    if (!copy) continue;
    if (!enabled) out.push({ ref, keep: 'prune is off (spec.prune: false): left in the cluster' });
    else if (!mayPrune(copy, owner))
      out.push({
        ref,
        keep: 'not deleted: opted out by annotation (prune disabled, apply Ignore), or no longer labelled as this package',
      });
    else out.push({ ref });
  }
  for (const ref of plan.released) {
    if (!live.has(refKey(ref))) continue;
    out.push({ ref, keep: 'a protected kind (spec.pruneProtectedKinds: false): left in the cluster' });
  }
  return out;
}

function summarize(actions: readonly PlanAction[], unchanged: number): PlanSummary {
  const summary: PlanSummary = {
    create: 0,
    update: 0,
    recreate: 0,
    prune: 0,
    keep: 0,
    conflict: 0,
    reject: 0,
    immutable: 0,
    skip: 0,
    unchanged,
    rolls: 0,
  };
  for (const a of actions) {
    summary[a.action]++;
    if (a.rolls) summary.rolls++;
  }
  return summary;
}

function fileOf(key: string, sources: ReadonlyMap<string, string> | undefined): { file?: string } {
  const file = sources?.get(key);
  return file ? { file } : {};
}
