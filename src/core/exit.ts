/**
 * How a reconcile ends, and when it runs again: the one table of requeue delays (docs/adr/0037). The run context
 * (engine/run.ts) is the only exit of a reconcile and of a teardown; it writes status (through core/status.ts),
 * events and logs for the ending, and takes its requeue from here. The manager and the work queue add no delay of
 * their own.
 */
import type { Failure } from './failure.ts';

/** How one run ended. */
export type Ending =
  /** Applied and healthy, or found settled: the next periodic check after spec.interval. */
  | { kind: 'succeeded' }
  /** A step failed: back off from spec.retryInterval (before it is known, a spec refused: INVALID_SPEC_RETRY_MS). */
  | { kind: 'failed'; failure: Failure }
  /** A dependency is not Ready yet: look again after spec.retryInterval (its turning Ready wakes it sooner). */
  | { kind: 'dependency-not-ready' }
  /** The teardown of a PackageSync being deleted failed: the finalizer stays, tried again soon. */
  | { kind: 'teardown-failed'; failure: Failure }
  /** Suspended, deleted, torn down: only the next change of the PackageSync runs it again. */
  | { kind: 'done' }
  /**
   * A newer revision made the health wait moot. Superseded by the manager (a new generation, the trigger
   * annotation) or shutdown: the manager re-runs it; a new commit on the ref: at once.
   */
  | { kind: 'superseded'; byManager: boolean }
  /** An API fault mid-reconcile (a throw, e.g. the API server restarting). */
  | { kind: 'interrupted' };

/** What the work queue is told: when to run again, and whether to back off (a failure). */
export interface Requeue {
  /** Undefined: only on the next change of the PackageSync. */
  requeueAfterMs?: number;
  failed: boolean;
}

/** A spec the schema refuses has no retryInterval to read; an edit wakes it at once anyway. */
export const INVALID_SPEC_RETRY_MS = 60_000;
/** A failed teardown (the finalizer stays) is tried again this soon, as before a PackageSync had a retryInterval. */
export const TEARDOWN_RETRY_MS = 5_000;
/** An API fault is retried this soon (with the queue's back-off). */
export const INTERRUPTED_RETRY_MS = 5_000;

/** The spec's timing, when it could be read. */
export interface Timing {
  intervalMs: number;
  retryMs: number;
}

/**
 * When a run that ended so runs again. `timing` is undefined until the spec was read and found valid (its health
 * expressions compiled): a failure before that is a spec to fix.
 */
export function requeueOf(ending: Ending, timing: Timing | undefined): Requeue {
  const retry = timing?.retryMs ?? INVALID_SPEC_RETRY_MS;
  switch (ending.kind) {
    case 'succeeded':
      return { failed: false, requeueAfterMs: timing?.intervalMs ?? INVALID_SPEC_RETRY_MS };
    case 'failed':
      return { failed: true, requeueAfterMs: retry };
    case 'dependency-not-ready':
      return { failed: false, requeueAfterMs: retry };
    case 'teardown-failed':
      return { failed: true, requeueAfterMs: TEARDOWN_RETRY_MS };
    case 'done':
      return { failed: false };
    case 'superseded':
      return ending.byManager ? { failed: false } : { failed: false, requeueAfterMs: 0 };
    case 'interrupted':
      return { failed: true, requeueAfterMs: INTERRUPTED_RETRY_MS };
  }
}
