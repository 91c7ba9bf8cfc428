/**
 * Step 6: wait until every applied object is Current (kstatus), naming the cause when it is not.
 *
 * Each round reads the package's objects from a HealthSource (shared watches, or LISTs when impersonating),
 * explains workloads that are not Current by their ReplicaSets and Pods, and then sleeps until the source
 * reports a change. It ends:
 * - Current: every object is Current;
 * - failed: an object turned Failed (fail fast: waiting longer cannot help);
 * - timeout: every object still not Current is named, with its cause;
 * - cancelled: the signal fired (a newer revision arrived, or shutdown); the caller starts over.
 */
import { Reason } from '../api/reasons.ts';
import type { Failure } from '../core/failure.ts';
import {
  computeHealth,
  describeUnhealthy,
  explainWorkload,
  summarizeHealth,
  type HealthSummary,
  type ObjectHealth,
} from '../core/health/index.ts';
import { groupOf, refKey, refOf, type KubeObject } from '../core/object.ts';
import type { Objects } from '../adapters/kube/objects.ts';
import type { Owner } from '../core/plan/ownership.ts';
import { listSource, type HealthSource } from './health-source.ts';

const WORKLOADS = new Set(['apps/Deployment', 'apps/StatefulSet', 'apps/DaemonSet', 'apps/ReplicaSet', 'batch/Job']);

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
  /** Called when the summary changes, so status can say what is still in progress. */
  onProgress?: (summary: HealthSummary) => Promise<void> | void;
  /** Polling sources want short sleeps; watch sources sleep until an event. */
  recheckMs?: number;
}

export type WaitResult =
  | { ok: true; summary: HealthSummary }
  | { ok: false; summary: HealthSummary; failure: Failure }
  | { ok: false; summary: HealthSummary; cancelled: true };

/** Health of objects as read once (no wait): the apply's copies, or the live ones. */
export function healthOf(objects: KubeObject[]): HealthSummary {
  return summarizeHealth(objects.map((o) => ({ object: refOf(o), health: computeHealth(o) })));
}

/**
 * The wait as the CLI uses it: LIST polling as the given identity, and a cancel reported as a failure.
 * `signal` is the whole command's budget.
 */
export async function waitForHealth(
  objects: Objects,
  desired: readonly KubeObject[],
  owner: Owner,
  opts: { impersonate?: string; signal: AbortSignal; timeoutMs: number; onProgress?: WaitOptions['onProgress'] },
): Promise<{ ok: true; summary: HealthSummary } | { ok: false; summary: HealthSummary; failure: Failure }> {
  // The wait's own deadline ends it, so running out of time names the objects; a read cut short by the
  // command's budget would only throw.
  const source = listSource(objects, owner, { impersonate: opts.impersonate, signal: new AbortController().signal });
  const waited = await waitUntilHealthy(source, desired, { ...opts, known: new Map(), recheckMs: 2_000 });
  if (!('cancelled' in waited)) return waited;
  const failure = { reason: Reason.HealthCheckFailed, message: 'health wait cancelled', terminal: false };
  return { ok: false, summary: waited.summary, failure };
}

export async function waitUntilHealthy(
  source: HealthSource,
  desired: readonly KubeObject[],
  opts: WaitOptions,
): Promise<WaitResult> {
  const started = Date.now();
  const deadline = started + opts.timeoutMs;
  let lastMessage = '';
  for (;;) {
    const list = await observe(source, desired, opts.known, Date.now() - started < WATCH_LAG_GRACE_MS);
    const summary = summarizeHealth(list);
    if (summary.status === 'Current') return { ok: true, summary };
    if (summary.counts.Failed > 0) return { ok: false, summary, failure: healthFailure(list, summary, 'failed') };
    // the deadline first: when time ran out, that is what to report, whatever else happened meanwhile
    const left = deadline - Date.now();
    if (left <= 0) return { ok: false, summary, failure: healthFailure(list, summary, 'timeout') };
    if (opts.signal.aborted) return { ok: false, summary, cancelled: true };
    if (summary.message !== lastMessage) {
      lastMessage = summary.message;
      await opts.onProgress?.(summary);
    }
    await source.changed(Math.min(left, opts.recheckMs ?? WATCH_RECHECK_MS), opts.signal);
  }
}

async function observe(
  source: HealthSource,
  desired: readonly KubeObject[],
  known: ReadonlyMap<string, KubeObject>,
  inGrace: boolean,
): Promise<ObjectHealth[]> {
  const refs = desired.map(refOf);
  const live = await source.read(refs);
  const objects = refs.map((ref) => newest(live.get(refKey(ref)), known.get(refKey(ref)), inGrace));
  const health = objects.map((o) => (o ? computeHealth(o) : undefined));
  const unhealthyWorkloads = objects.filter(
    (o, i): o is KubeObject => !!o && isWorkload(o) && health[i]!.status !== 'Current',
  );
  const children = await source.children(unhealthyWorkloads);
  return refs.map((ref, i) => {
    const obj = objects[i];
    if (!obj) return { object: ref, health: { status: 'NotFound', reason: 'NotFound', message: 'object not found' } };
    if (health[i]!.status === 'Current' || !isWorkload(obj)) return { object: ref, health: health[i]! };
    return { object: ref, health: explainWorkload(obj, children) };
  });
}

const isWorkload = (o: KubeObject) => WORKLOADS.has(`${groupOf(o.apiVersion)}/${o.kind}`);

/**
 * The fresher of the read copy and the one the apply returned. A watch may not have delivered the apply's
 * own change yet: a copy of an older generation (same uid) is certainly stale. resourceVersions are opaque
 * and not compared. A missing copy counts as "not delivered yet" only for a short grace after the apply.
 */
export function newest(
  read: KubeObject | undefined,
  known: KubeObject | undefined,
  inGrace: boolean,
): KubeObject | undefined {
  if (!known) return read;
  if (!read) return inGrace ? known : undefined;
  if (read.metadata.uid === known.metadata.uid) {
    return (read.metadata.generation ?? 0) >= (known.metadata.generation ?? 0) ? read : known;
  }
  // Recreated (a forced replace, or by someone else): the later creation is the one that exists.
  const created = (o: KubeObject) => String(o.metadata.creationTimestamp ?? '');
  return created(read) > created(known) ? read : known;
}

function healthFailure(list: readonly ObjectHealth[], summary: HealthSummary, why: 'failed' | 'timeout'): Failure {
  const first = summary.first?.object;
  const notCurrent = summary.total - summary.counts.Current;
  const message =
    why === 'timeout'
      ? `timeout waiting for health: ${plural(notCurrent)} not Current: ${describeUnhealthy(list)}`
      : `health check failed: ${describeUnhealthy(list.filter((o) => o.health.status === 'Failed'))}${
          notCurrent > summary.counts.Failed
            ? ` (also ${plural(notCurrent - summary.counts.Failed)} not Current yet)`
            : ''
        }`;
  return { reason: Reason.HealthCheckFailed, message, ...(first ? { object: first } : {}), terminal: false };
}

const plural = (n: number) => (n === 1 ? '1 object' : `${n} objects`);
