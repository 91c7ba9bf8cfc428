/**
 * Step 5a: server-side apply over the dependency graph (core/plan/graph.ts), best effort:
 * - independent objects apply concurrently (bounded, in apply order, back-off on 429 in the client);
 * - an object starts once what it needs is there: its Namespace applied, its CRD applied, Established
 *   and served by discovery, each object its depends-on names applied and Current (kpt's semantics;
 *   one outside the package is only waited on), all within the reconcile's budget (the signal). This file
 *   decides the order; the waits themselves are the health wait's (wait.ts: untilServed, untilCurrent);
 * - a failed object holds back only its dependents, reported as skipped naming it; everything else
 *   carries on, and every failure of the run is returned at once, in apply order.
 * The caller prunes nothing when anything failed.
 */
import PQueue from 'p-queue';
import { Reason } from '../api/reasons.ts';
import { applyFailure, fieldConflicts } from '../adapters/kube/objects.ts';
import type { Objects } from './ports.ts';
import { fail, ok, type Failure, type Result } from '../core/failure.ts';
import type { Health, HealthRules } from '../core/health/index.ts';
import type { Change } from '../core/plan/changeset.ts';
import { describeObject, type DependencyGraph } from '../core/plan/graph.ts';
import { ApplySchedule } from '../core/plan/schedule.ts';
import { decideRefusedCreate } from '../core/plan/create-only.ts';
import type { Owner } from '../core/plan/ownership.ts';
import { describeRef, refKey, refOf, type KubeObject, type ObjectRef } from '../core/object.ts';
import { withSourceFile } from '../core/render/locate.ts';
import { sleep } from './health-source.ts';
import { untilCurrent, untilServed } from './wait.ts';

export interface ApplyResult {
  /** created / configured / unchanged, per object handled before the apply ended. */
  changes: Change[];
  /** The object as the server stored it (status included), for objects that were sent. */
  stored: Map<string, KubeObject>;
  /**
   * Every failure of the run, in apply order, one per object: its own failure, or DependencyFailed for an
   * object skipped because something it needs failed. Empty on success.
   */
  failures: Failure[];
  /** refKey → the field managers whose fields a drift correction took back (ApplyOptions.takeBack). */
  takenBack: Map<string, string[]>;
  /** refKeys of objects sent create-only that exist and whose live copy says apply Ignore: not in health. */
  ignored: Set<string>;
}

export interface ApplyOptions {
  force: boolean;
  /** Objects opted in to delete and re-create on an immutable-field change (packagesync.io/recreate; docs/adr/0023). */
  recreate?: ReadonlySet<string>;
  /** Objects being adopted: they take over fields from the managers that created them (docs/adr/0006). */
  adopt?: ReadonlySet<string>;
  /**
   * Drifted objects (driftPolicy Correct): applied without force first; fields another manager took are then
   * taken back with force and the managers recorded (docs/adr/0022).
   */
  takeBack?: ReadonlySet<string>;
  /**
   * New objects the plan did not read (ChangePlan.createOnly): sent create-only, read only when that is refused,
   * then decided for `owner` as the plan would have (docs/adr/0029). Both or neither.
   */
  createOnly?: ReadonlySet<string>;
  owner?: Owner;
  /** The reconcile's budget: a dependency not Current when it fires fails its dependents. */
  signal: AbortSignal;
  concurrency: number;
  /** Live copies read before the apply (refKey →), for the health of objects that need no apply. */
  live?: ReadonlyMap<string, KubeObject>;
  /** refKey → source file, for messages. */
  sources?: ReadonlyMap<string, string>;
  /** spec.healthCheckExprs, compiled: how a depends-on dependency's health is judged. */
  healthRules?: HealthRules;
}

export async function applyGraph(
  objects: Objects,
  graph: DependencyGraph,
  needsApply: (obj: KubeObject) => boolean,
  opts: ApplyOptions,
): Promise<ApplyResult> {
  const result: ApplyResult = {
    changes: [],
    stored: new Map(),
    failures: [],
    takenBack: new Map(),
    ignored: new Set(),
  };
  const schedule = new ApplySchedule(graph);
  const queue = new PQueue({ concurrency: opts.concurrency });
  const position = new Map(graph.order.map((i, p) => [i, p]));
  const failed: { node: number; failure: Failure }[] = [];
  const externals = new Map<string, Promise<Health | undefined>>();
  const where = (i: number) => describeObject(graph.nodes[i]!.ref, opts.sources);
  // what an object waits for before its dependents go: the health wait's (wait.ts), within the same budget
  const waits = { signal: opts.signal, ...(opts.healthRules ? { healthRules: opts.healthRules } : {}) };

  const ownFailure = new Set<number>();
  const record = (i: number, own: Failure) => {
    // every failure names where the object is defined (file:line for a plain file), status.failures too
    const failure = withSourceFile(own, opts.sources ?? new Map());
    failed.push({ node: i, failure });
    if (failure.reason !== Reason.DependencyFailed) ownFailure.add(i);
    for (const skip of schedule.failed(i)) {
      const because = ownFailure.has(skip.because) ? 'which failed' : 'which was skipped';
      failed.push({
        node: skip.node,
        failure: {
          reason: Reason.DependencyFailed,
          message: `${where(skip.node)} skipped: it depends on ${describeRef(graph.nodes[skip.because]!.ref)}, ${because}`,
          object: graph.nodes[skip.node]!.ref,
          terminal: false,
        },
      });
    }
  };

  const run = async (i: number, pump: () => void): Promise<void> => {
    const node = graph.nodes[i]!;
    for (const ext of node.external) {
      const key = refKey(ext);
      if (!externals.has(key)) externals.set(key, untilCurrent(objects, ext, undefined, waits));
      const unhealthy = await externals.get(key)!;
      if (unhealthy) {
        const message = `${where(i)} skipped: it depends on ${describeRef(ext)} (outside the package), which is not Current: ${unhealthy.message}`;
        return record(i, { reason: Reason.DependencyFailed, message, object: node.ref, terminal: false });
      }
    }
    let current: KubeObject | undefined = opts.live?.get(node.key);
    if (!needsApply(node.object)) {
      result.changes.push({ ref: node.ref, action: 'unchanged' });
    } else {
      if (opts.signal.aborted) return record(i, cancelled(node.ref));
      const applied = await queue.add(() => applyOne(objects, node.object, opts, result), {
        priority: -position.get(i)!,
      });
      if (applied && !applied.ok) return record(i, applied.failure);
      current = result.stored.get(node.key);
      if (isCrd(node.object)) {
        const served = await untilServed(objects, node.object, waits);
        if (!served.ok) return record(i, served.failure);
      }
    }
    schedule.applied(i);
    if (!schedule.needsHealth(i)) return;
    pump(); // what needs it only applied goes ahead while its depends-on dependents wait for health
    const unhealthy = await untilCurrent(objects, node.ref, current, waits);
    if (!unhealthy) return schedule.healthy(i);
    record(i, {
      reason: Reason.HealthCheckFailed,
      message: `${where(i)} did not become Current, and objects that name it in config.kubernetes.io/depends-on wait for that: ${unhealthy.message}`,
      object: node.ref,
      terminal: false,
    });
  };

  await new Promise<void>((resolve) => {
    let inFlight = 0;
    const pump = () => {
      for (const i of schedule.take()) {
        inFlight++;
        void run(i, pump)
          .catch((e: unknown) => record(i, applyFailure(graph.nodes[i]!.object, e)))
          .finally(() => {
            inFlight--;
            pump();
          });
      }
      if (inFlight === 0) resolve();
    };
    pump();
  });

  failed.sort((a, b) => position.get(a.node)! - position.get(b.node)!);
  result.failures = failed.map((f) => f.failure);
  if (!schedule.done() && result.failures.length === 0) {
    // Cannot happen with a valid graph; never report a half-applied package as a success.
    result.failures.push({ reason: Reason.InternalError, message: 'apply stopped with objects left', terminal: false });
  }
  return result;
}

const isCrd = (o: KubeObject) =>
  o.kind === 'CustomResourceDefinition' && o.apiVersion.startsWith('apiextensions.k8s.io/');

function cancelled(ref: ObjectRef): Failure {
  return {
    reason: Reason.ApplyFailed,
    message: `${describeRef(ref)}: not applied: the reconcile ran out of time, or a newer revision or shutdown cancelled it`,
    object: ref,
    terminal: false,
  };
}

async function applyOne(
  objects: Objects,
  planned: KubeObject,
  opts: ApplyOptions,
  result: ApplyResult,
): Promise<Result<void>> {
  const key = refKey(refOf(planned));
  let obj = planned;
  let adopt = opts.adopt?.has(key) ?? false;
  let optedIn = opts.recreate?.has(key) ?? false;
  if (opts.createOnly?.has(key) && opts.owner) {
    const first = await createUnread(objects, planned, opts.owner, opts, result).catch(
      (e: unknown): Result<undefined> => ({ ok: false, failure: applyFailure(planned, e) }),
    );
    if (!first.ok) return first;
    if (!first.value) return ok(undefined);
    ({ object: obj, adopt, recreate: optedIn } = first.value);
  }
  try {
    const force = opts.force || adopt;
    const res = await objects.apply(obj, { force, signal: opts.signal }).catch(async (e: unknown) => {
      const conflicts = force || !opts.takeBack?.has(key) ? [] : fieldConflicts(e);
      if (conflicts.length === 0) throw e;
      // drift: the package set these fields at this very revision; someone changed them since
      result.takenBack.set(key, [...new Set(conflicts.map((c) => c.manager))]);
      return objects.apply(obj, { force: true, signal: opts.signal });
    });
    result.changes.push({ ref: refOf(obj), action: res.created ? 'created' : 'configured' });
    result.stored.set(key, res.object);
    return ok(undefined);
  } catch (e) {
    const failure = applyFailure(obj, e);
    const mayRecreate = opts.force || optedIn;
    if (failure.reason !== Reason.ImmutableFieldChange) return { ok: false, failure };
    if (!mayRecreate) return { ok: false, failure: opts.sources ? withSourceFile(failure, opts.sources) : failure };
    // spec.force or the object's recreate opt-in: delete, wait until it is gone, create it again. What it
    // owns (a Job's Pods, a Service's EndpointSlices) goes with it (Background propagation); the package's
    // objects that need it are applied after it in graph order, so they find the new one.
    const recreated = await recreate(objects, obj, opts);
    if (!recreated.ok) return recreated;
    result.changes.push({ ref: refOf(obj), action: 'created' });
    result.stored.set(key, recreated.value);
    return ok(undefined);
  }
}

/**
 * A new object the plan did not read (docs/adr/0029): its apply is sent create-only. Created: done. Refused (it
 * exists): read it and decide as the plan would have (core/plan/create-only.ts): done when it is left alone or
 * conflicts, else the plain apply to make instead. One deleted between the refusal and the read is tried again.
 */
async function createUnread(
  objects: Objects,
  obj: KubeObject,
  owner: Owner,
  opts: ApplyOptions,
  result: ApplyResult,
): Promise<Result<{ object: KubeObject; adopt: boolean; recreate: boolean } | undefined>> {
  const ref = refOf(obj);
  const key = refKey(ref);
  for (let attempt = 0; attempt < 3; attempt++) {
    const created = await objects.create(obj, { force: opts.force, signal: opts.signal });
    if (created) {
      result.changes.push({ ref, action: 'created' });
      result.stored.set(key, created);
      return ok(undefined);
    }
    const live = await objects.get(ref, { signal: opts.signal });
    if (!live) continue;
    const decided = decideRefusedCreate(obj, live, owner);
    if (!decided.ok) return decided;
    if (decided.value.action === 'apply') return ok(decided.value);
    result.changes.push({ ref, action: 'unchanged' });
    result.stored.set(key, live);
    if (decided.value.ignored) result.ignored.add(key);
    return ok(undefined);
  }
  return fail(
    Reason.ApplyFailed,
    `${describeRef(ref)}: not applied: it exists when created and is gone when read, again and again; the next reconcile tries again`,
    { object: ref },
  );
}

async function recreate(objects: Objects, obj: KubeObject, opts: ApplyOptions): Promise<Result<KubeObject>> {
  const ref = refOf(obj);
  try {
    const deleted = await objects.delete(ref, { signal: opts.signal });
    const held = deleted.gone ? '' : ` (finalizers: ${deleted.finalizers.join(', ')})`;
    const deadline = Date.now() + 60_000;
    while (await objects.get(ref, { signal: opts.signal })) {
      if (Date.now() > deadline || opts.signal.aborted) {
        const message = `${describeRef(ref)}: deleted to recreate it, but it is still terminating${held}`;
        return fail(Reason.ImmutableFieldChange, message, { object: ref });
      }
      await sleep(250, opts.signal);
    }
    const res = await objects.apply(obj, { force: true, signal: opts.signal });
    return ok(res.object);
  } catch (e) {
    return { ok: false, failure: applyFailure(obj, e) };
  }
}
