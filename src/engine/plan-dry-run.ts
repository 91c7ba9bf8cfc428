/**
 * `packagesync plan`'s I/O: every object the planner would send goes through a server-side apply with
 * dryRun=All, as the identity the controller would use and with its field manager and force, so defaults,
 * admission (policies and webhooks), RBAC and field ownership all answer as they would for the real apply.
 * Each answer becomes a DryRunOutcome (core/plan/dry-run-outcome.ts); core/plan/plan-report.ts orders them.
 * Shared by `plan` and `apply --plan-digest`, so both compute the same plan.
 */
import PQueue from 'p-queue';
import { isNotFound, KubeApiError } from '../adapters/kube/client.ts';
import { applyFailure } from '../adapters/kube/objects.ts';
import type { Objects } from './ports.ts';
import { refKey, refOf, type KubeObject } from '../core/object.ts';
import { classifyDryRunError, type DryRunCause } from '../core/plan/dry-run-outcome.ts';
import { fieldChanges, rollsPods } from '../core/plan/field-changes.ts';
import type { ChangePlan } from '../core/plan/plan-changes.ts';
import type { Owner } from '../core/plan/ownership.ts';
import { buildPlan, pruneCandidates, type DryRunOutcome, type Plan } from '../core/plan/plan-report.ts';

export interface DryRunOptions {
  /** spec.force / --force. */
  force: boolean;
  concurrency?: number;
  signal?: AbortSignal;
}

/**
 * Node index → outcome, for every node the plan would apply. An answer that says nothing about the object
 * (5xx, no connection) is thrown: the plan cannot be known.
 */
export async function dryRunPlan(
  objects: Objects,
  plan: ChangePlan,
  live: ReadonlyMap<string, KubeObject>,
  opts: DryRunOptions,
): Promise<Map<number, DryRunOutcome>> {
  const queue = new PQueue({ concurrency: opts.concurrency ?? 16 });
  const out = new Map<number, DryRunOutcome>();
  const { nodes, order } = plan.graph;
  await Promise.all(
    order
      .filter((i) => plan.toApply.has(nodes[i]!.key))
      .map((i) =>
        queue.add(async () => {
          const obj = nodes[i]!.object;
          // drift the reconcile takes back (driftPolicy Correct) is applied with force there: predict that,
          // not a conflict
          const key = nodes[i]!.key;
          const force = opts.force || plan.adopt.has(key) || plan.takeBack.has(key);
          out.set(i, await dryRunOne(objects, obj, live.get(refKey(refOf(obj))), force, opts.signal));
        }),
      ),
  );
  return out;
}

async function dryRunOne(
  objects: Objects,
  obj: KubeObject,
  live: KubeObject | undefined,
  force: boolean,
  signal: AbortSignal | undefined,
): Promise<DryRunOutcome> {
  try {
    const res = await objects.apply(obj, { dryRun: true, force, ...(signal ? { signal } : {}) });
    if (!live) return { kind: 'create' };
    const changes = fieldChanges(live, res.object);
    return { kind: 'update', changes, rolls: rollsPods(obj, changes) };
  } catch (e) {
    // A new object whose Namespace or CRD the same package brings cannot be dry-run before those exist:
    // it would be created once they are (as `packagesync diff` shows it).
    if (!live && isNotFound(e)) return { kind: 'create' };
    const failure = applyFailure(obj, e);
    const api = e instanceof KubeApiError ? e : undefined;
    const causes = ((api?.details as { causes?: unknown } | undefined)?.causes ?? []) as DryRunCause[];
    const outcome = classifyDryRunError({
      status: api?.status ?? 0,
      reason: failure.reason,
      message: failure.message,
      causes: Array.isArray(causes) ? causes : [],
    });
    if (!outcome) throw e;
    return outcome;
  }
}

export interface PlanOptions extends DryRunOptions {
  owner: Owner;
  /** spec.prune / --prune. */
  prune: boolean;
  renderDigest: string;
  sources?: ReadonlyMap<string, string>;
  /** The prune budget's verdict, when a PackageSync's spec.pruneBudget applies. */
  pruneBudget?: { exceeded: boolean; message?: string };
}

/** The dry runs, then the plan (core/plan/plan-report.ts): what `plan` prints and `apply --plan-digest` checks. */
export async function planWithDryRun(
  objects: Objects,
  planned: { plan: ChangePlan; live: ReadonlyMap<string, KubeObject> },
  opts: PlanOptions,
): Promise<Plan> {
  const { plan, live } = planned;
  const outcomes = await dryRunPlan(objects, plan, live, opts);
  return buildPlan({
    graph: plan.graph,
    outcomes,
    force: opts.force,
    recreate: plan.recreate,
    prunes: pruneCandidates(plan, live, opts.owner, opts.prune),
    renderDigest: opts.renderDigest,
    ...(opts.pruneBudget ? { pruneBudget: opts.pruneBudget } : {}),
    ...(opts.sources ? { sources: opts.sources } : {}),
  });
}
