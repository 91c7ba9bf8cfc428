/**
 * Step 6 of the reconcile as the controller runs it: pick where live state comes from, keep status saying
 * what is still in progress, and stop waiting as soon as a newer revision makes the wait pointless.
 *
 * A newer revision arrives three ways: a new generation or the trigger annotation (the manager aborts
 * `superseded`), or a new commit on the followed ref, noticed here by re-resolving the source every
 * spec.interval while the wait lasts longer than that.
 */
import type { Spec } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import { fail, type Result } from '../core/failure.ts';
import type { CauseLink, HealthRules, HealthSummary } from '../core/health/index.ts';
import type { KubeObject } from '../core/object.ts';
import { listSource, sleep, watchSource } from './health-source.ts';
import type { PackageObjects, Ports } from './ports.ts';
import { waitUntilHealthy } from './wait.ts';

/** What the health step tells its caller while it waits: the reconcile's run context. */
export interface HealthProgress {
  /** Writes the Reconciling message. */
  waiting(message: string): Promise<void>;
  /**
   * The latest health summary (the last one is what the wait ended with) and the chain from its first object
   * that is not Current to the cause ([] when every object is Current).
   */
  observed(summary: HealthSummary, cause: readonly CauseLink[]): void;
}

export interface HealthStepInput {
  ports: Ports;
  spec: Spec;
  /** The package's objects, as the identity the run acts as. */
  objects: PackageObjects;
  desired: readonly KubeObject[];
  /** Copies from the live read and the apply, by refKey. */
  known: ReadonlyMap<string, KubeObject>;
  revision: string;
  /** What the package reads, as a revision (FetchedSource.pathRevision): a commit elsewhere is no new revision. */
  pathRevision?: string;
  credentials: Record<string, string> | undefined;
  timeoutMs: number;
  /**
   * Shutdown only. Not the reconcile's budget: the wait keeps its own deadline, so that running out of
   * time reads as a timeout (named objects, Stalled) and never as a cancel.
   */
  signal: AbortSignal;
  /** Fires when a new generation or the trigger annotation arrived for this PackageSync. */
  superseded?: AbortSignal;
  interval: number;
  /** What Reconciling says once the wait outlasts WAITING_WRITE_GRACE_MS and no object has been named yet. */
  waitingMessage: string;
  progress: HealthProgress;
  /** spec.healthCheckExprs, compiled. */
  rules?: HealthRules;
}

/** Progress messages that only change numbers are written at most this often: each is a status write. */
const PROGRESS_MIN_INTERVAL_MS = 2_000;

/**
 * A wait that ends sooner writes no progress at all: status goes from "Applying revision …" straight to the
 * outcome, one status write fewer per reconcile (most of a fleet's objects are healthy within a second).
 */
const WAITING_WRITE_GRACE_MS = 1_000;

/**
 * Ok with the summary when every object is Current; HealthCheckFailed when one failed or time ran out;
 * Superseded when a newer revision (or shutdown) made the wait moot: the caller tells which from its signals
 * (neither fired: a new commit on the followed ref, start over at once).
 */
export async function awaitHealth(input: HealthStepInput): Promise<Result<HealthSummary>> {
  const { ports, objects } = input;
  const { owner } = objects;
  const stop = new AbortController();
  const signal = AbortSignal.any([input.signal, stop.signal, ...(input.superseded ? [input.superseded] : [])]);
  const polling = listSource(objects, { signal });
  // Shared watches read as the controller in its cluster, or as the kubeconfig's identity in a remote one
  // (remote-clusters.ts); a PackageSync that impersonates a ServiceAccount reads as it, by polling (docs/adr/0026).
  const shared = objects.identity ? undefined : objects.cluster ? objects.watches : ports.watches;
  const source = shared ? watchSource(shared, `${owner.namespace}/${owner.name}`, polling) : polling;

  let newRevision: string | undefined;
  const poll = pollRevision(input, stop.signal).then((rev) => {
    if (rev === undefined) return;
    newRevision = rev;
    stop.abort();
  });

  let lastKey = '';
  let lastWrite = 0;
  // Progress writes go out one after another, and all are done before this step returns: the outcome's
  // status write must be the last.
  let writes: Promise<void> = Promise.resolve();
  const write = (message: string) => {
    lastWrite = Date.now();
    const next = writes.catch(() => undefined).then(() => input.progress.waiting(message));
    writes = next;
    return next;
  };
  let pending: string | undefined = input.waitingMessage;
  const waitStarted = Date.now();
  const grace = setTimeout(() => {
    if (pending !== undefined) void write(pending).catch(() => undefined);
    pending = undefined;
  }, WAITING_WRITE_GRACE_MS);
  const cancelled = () =>
    fail<HealthSummary>(
      Reason.Superseded,
      newRevision ? `revision ${newRevision} arrived while waiting for health` : 'health wait cancelled',
    );
  try {
    const waited = await waitUntilHealthy(source, input.desired, {
      signal,
      timeoutMs: input.timeoutMs,
      known: input.known,
      ...(input.rules ? { rules: input.rules } : {}),
      observed: (summary, cause) => {
        ports.observe?.healthRound?.();
        input.progress.observed(summary, cause);
      },
      ...(source === polling ? { recheckMs: 2_000 } : {}),
      onProgress: async (s) => {
        // A new object to name or a new count is worth a write at once; a changed number in the same
        // object's message can wait a little.
        const key = `${s.status}|${JSON.stringify(s.counts)}|${s.first ? JSON.stringify(s.first.object) : ''}`;
        if (key === lastKey && Date.now() - lastWrite < PROGRESS_MIN_INTERVAL_MS) return;
        lastKey = key;
        const message = `Applied revision ${input.revision}; waiting for health: ${s.message}`;
        if (Date.now() - waitStarted < WAITING_WRITE_GRACE_MS) {
          pending = message; // written when the grace ends, if the wait is still on
          return;
        }
        pending = undefined;
        await write(message);
      },
    });
    if (!waited.ok && waited.failure.reason === Reason.Superseded) return cancelled();
    return waited;
  } catch (e) {
    if (signal.aborted) return cancelled(); // a read cut short by the cancel itself
    throw e;
  } finally {
    clearTimeout(grace);
    stop.abort();
    await poll;
    source.close();
    await writes.catch(() => undefined);
  }
}

/**
 * Re-resolves the source every spec.interval while the wait runs (only when the wait can outlast it);
 * resolves with the new revision when the followed ref moved, undefined when stopped first.
 */
async function pollRevision(input: HealthStepInput, stop: AbortSignal): Promise<string | undefined> {
  if (input.interval <= 0 || input.interval >= input.timeoutMs) return undefined;
  const signal = AbortSignal.any([stop, input.signal]);
  for (;;) {
    await sleep(input.interval, signal);
    if (signal.aborted) return undefined;
    const fetched = await input.ports.source.fetch(input.spec.source, input.credentials, signal).catch(() => undefined);
    if (signal.aborted) return undefined;
    // a failed fetch proves nothing: keep waiting for what was applied
    const samePackage =
      input.pathRevision !== undefined && fetched?.ok && fetched.value.pathRevision === input.pathRevision;
    if (fetched?.ok && fetched.value.revision !== input.revision && !samePackage) {
      input.ports.log.info(
        { revision: input.revision, newRevision: fetched.value.revision },
        'new revision while waiting for health: starting over',
      );
      return fetched.value.revision;
    }
  }
}
