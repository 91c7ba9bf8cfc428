/**
 * Step 6: wait until every applied object is Current (kstatus), naming the cause when it is not.
 *
 * Each round reads the package's objects from a HealthSource (shared watches, or LISTs when impersonating),
 * reads the ReplicaSets and Pods of workloads that are not Current, and lets src/core/health judge them;
 * then it sleeps until the source reports a change. It ends:
 * - ok: every object is Current;
 * - HealthCheckFailed: an object turned Failed (fail fast: waiting longer cannot help), or time ran out
 *   (every object still not Current is named, with its cause);
 * - Superseded: the signal fired (a newer revision arrived, or shutdown); the caller starts over.
 *
 * Below it, the waits the apply makes between one object and its dependents (a CRD until served, a depends-on
 * dependency until Current): the same judgement of health, on one object, before the package's wait.
 */
import { Reason } from '../api/reasons.ts';
import { isNotFound } from '../adapters/kube/client.ts';
import { applyFailure } from '../adapters/kube/objects.ts';
import type { Objects, PackageObjects } from './ports.ts';
import { fail, ok, type Result } from '../core/failure.ts';
import {
  freshestCopy,
  healthWith,
  notFoundHealth,
  type Health,
  healthCause,
  healthFailure,
  judgeHealth,
  summarizeHealth,
  workloadsToExplain,
  type CauseLink,
  type HealthRules,
  type HealthSummary,
  type ObjectHealth,
} from '../core/health/index.ts';
import { describeRef, refKey, refOf, type KubeObject, type ObjectRef } from '../core/object.ts';
import { listSource, sleep, type HealthSource } from './health-source.ts';

/** A watch event can lag the apply by a moment: until then, the copy the apply returned stands in. */
const WATCH_LAG_GRACE_MS = 5_000;
/** A watch needs no polling; a periodic look is a cheap safety net against a missed wake-up. */
const WATCH_RECHECK_MS = 30_000;

export interface WaitOptions {
  /** Fires when the wait must stop early: a newer revision, or shutdown. */
  signal: AbortSignal;
  timeoutMs: number;
  /** The objects as the apply (or the live read before it) left them, by refKey: the floor for each read. */
  known: ReadonlyMap<string, KubeObject>;
  /** Called when the summary's message changes, so status can say what is still in progress. */
  onProgress?: (summary: HealthSummary) => Promise<void> | void;
  /**
   * Called with every summary, the last one included (whatever the wait ends with), and while not every
   * object is Current the chain from the first of them to its cause.
   */
  observed?: (summary: HealthSummary, cause: readonly CauseLink[]) => void;
  /** Polling sources want short sleeps; watch sources sleep until an event. */
  recheckMs?: number;
  /** spec.healthCheckExprs, compiled: replaces kstatus for the kinds it names. */
  rules?: HealthRules;
}

/**
 * The wait as the CLI uses it: LIST polling as the package's identity, and a cancel reported as a failure.
 * `signal` is the whole command's budget.
 */
export async function waitForHealth(
  objects: PackageObjects,
  desired: readonly KubeObject[],
  opts: Pick<WaitOptions, 'signal' | 'timeoutMs' | 'onProgress' | 'observed'>,
): Promise<Result<HealthSummary>> {
  // The wait's own deadline ends it, so running out of time names the objects; a read cut short by the
  // command's budget would only throw.
  const source = listSource(objects, { signal: new AbortController().signal });
  const waited = await waitUntilHealthy(source, desired, { ...opts, known: new Map(), recheckMs: 2_000 });
  if (waited.ok || waited.failure.reason !== Reason.Superseded) return waited;
  return fail(Reason.HealthCheckFailed, 'health wait cancelled');
}

export async function waitUntilHealthy(
  source: HealthSource,
  desired: readonly KubeObject[],
  opts: WaitOptions,
): Promise<Result<HealthSummary>> {
  const started = Date.now();
  const deadline = started + opts.timeoutMs;
  let lastMessage = '';
  for (;;) {
    const seen = await observe(source, desired, opts, Date.now() - started < WATCH_LAG_GRACE_MS);
    const { list } = seen;
    const summary = summarizeHealth(list);
    opts.observed?.(summary, causeOf(summary, seen, opts.rules));
    if (summary.status === 'Current') return ok(summary);
    if (summary.counts.Failed > 0) return { ok: false, failure: healthFailure(list, summary, 'failed') };
    // the deadline first: when time ran out, that is what to report, whatever else happened meanwhile
    const left = deadline - Date.now();
    if (left <= 0) return { ok: false, failure: healthFailure(list, summary, 'timeout') };
    if (opts.signal.aborted) return fail(Reason.Superseded, 'health wait cancelled: a newer revision or shutdown');
    if (summary.message !== lastMessage) {
      lastMessage = summary.message;
      await opts.onProgress?.(summary);
    }
    await source.changed(Math.min(left, opts.recheckMs ?? WATCH_RECHECK_MS), opts.signal);
  }
}

interface Round {
  list: ObjectHealth[];
  /** The copy each entry of `list` was judged on (same index; undefined = not found). */
  copies: (KubeObject | undefined)[];
  children: KubeObject[];
}

/** One round: read the objects, keep the freshest copy of each, read children only where they explain. */
async function observe(
  source: HealthSource,
  desired: readonly KubeObject[],
  { known, rules }: Pick<WaitOptions, 'known' | 'rules'>,
  inGrace: boolean,
): Promise<Round> {
  const refs = desired.map(refOf);
  const live = await source.read(refs);
  const copies = refs.map((ref) => freshestCopy(live.get(refKey(ref)), known.get(refKey(ref)), inGrace));
  const children = await source.children(workloadsToExplain(copies, rules));
  return { list: judgeHealth(refs, copies, children, rules), copies, children };
}

/** The chain below the summary's first object that is not Current ([] when all are). */
function causeOf(summary: HealthSummary, round: Round, rules: HealthRules | undefined): CauseLink[] {
  if (!summary.first) return [];
  const copy = round.copies[round.list.indexOf(summary.first)];
  // a kind judged by a spec.healthCheckExprs rule is not explained by its Pods: the rule's verdict is the cause
  return healthCause(summary.first, copy && !rules?.ruleFor(copy) ? copy : undefined, round.children);
}

/*
 * The waits of the apply (step 5a, apply.ts): before an object's dependents are applied, a new CRD must be
 * Established and served (its custom resources need their REST mapping), and an object a depends-on names must be
 * Current (kpt's semantics). They wait on one object at a time within the reconcile's budget, read with GETs as the
 * package's identity, and every pause ends at once when the budget is aborted (time out, shutdown, newer revision).
 */

/** What the apply's waits take from it: the reconcile's budget, and spec.healthCheckExprs compiled. */
export interface ApplyWaitOptions {
  signal: AbortSignal;
  healthRules?: HealthRules;
}

/**
 * A new CRD's own limit to become Established, then again to be served, within the budget: an API server that
 * never establishes it fails its custom resources in 30 s instead of holding the whole of spec.timeout.
 */
const CRD_SERVED_TIMEOUT_MS = 30_000;

/**
 * Polls the object until kstatus says Current (undefined) or Failed, or the budget ends (its health then).
 * The copy the apply returned goes first: an object Current at once costs no read.
 */
export async function untilCurrent(
  objects: Objects,
  ref: ObjectRef,
  first: KubeObject | undefined,
  opts: ApplyWaitOptions,
): Promise<Health | undefined> {
  let copy = first;
  let health: Health = copy ? healthWith(copy, opts.healthRules) : notFoundHealth();
  for (let pause = 250; ; pause = Math.min(pause * 1.5, 2_000)) {
    if (health.status === 'Current') return undefined;
    if (health.status === 'Failed') return health;
    if (opts.signal.aborted) return { ...health, message: `${health.message} (when the reconcile's time ran out)` };
    await sleep(pause, opts.signal);
    if (opts.signal.aborted) continue; // woken by the abort: no read that is cancelled anyway
    try {
      copy = await objects.get(ref, { signal: opts.signal });
    } catch (e) {
      if (opts.signal.aborted) continue;
      throw e;
    }
    health = copy ? healthWith(copy, opts.healthRules) : notFoundHealth();
  }
}

/** A CRD just applied: ok once it is Established and discovery serves its kind; ApplyFailed naming it otherwise. */
export async function untilServed(objects: Objects, crd: KubeObject, opts: ApplyWaitOptions): Promise<Result<void>> {
  const established = await untilEstablished(objects, crd, opts);
  return established.ok ? untilDiscovered(objects, crd, opts) : established;
}

async function untilEstablished(objects: Objects, crd: KubeObject, opts: ApplyWaitOptions): Promise<Result<void>> {
  const deadline = Date.now() + CRD_SERVED_TIMEOUT_MS;
  const ref = refOf(crd);
  for (;;) {
    let live: KubeObject | undefined;
    try {
      live = await objects.get(ref, { signal: opts.signal });
    } catch (e) {
      if (!isNotFound(e)) return { ok: false, failure: applyFailure(crd, e) };
    }
    const conditions =
      (live?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return ok(undefined);
    if (Date.now() > deadline || opts.signal.aborted) {
      return fail(
        Reason.ApplyFailed,
        `${describeRef(ref)} was applied but did not become Established; its custom resources were not applied`,
        { object: ref },
      );
    }
    await sleep(100, opts.signal);
  }
}

/**
 * Established is not the end: the API server's discovery documents lag a moment behind it. Refresh our
 * discovery until the new CRD's kind is served, so the custom resources after it find their REST mapping
 * instead of failing with UnknownKind and a back-off.
 */
async function untilDiscovered(objects: Objects, crd: KubeObject, opts: ApplyWaitOptions): Promise<Result<void>> {
  const deadline = Date.now() + CRD_SERVED_TIMEOUT_MS;
  const spec = (crd.spec ?? {}) as { group?: string; names?: { kind?: string } };
  const group = spec.group ?? '';
  const kind = spec.names?.kind ?? '';
  for (;;) {
    await objects.discovery.refresh();
    if (objects.discovery.isNamespaced(group, kind) !== undefined) return ok(undefined);
    if (Date.now() > deadline || opts.signal.aborted) {
      return fail(
        Reason.ApplyFailed,
        `${describeRef(refOf(crd))} is Established but the API server does not serve kind ${kind} yet; its custom resources were not applied`,
        { object: refOf(crd) },
      );
    }
    await sleep(100, opts.signal);
  }
}
