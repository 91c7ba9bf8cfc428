import type { KubeObject } from '../object.ts';
import { condition, field, int, list, str, withReason } from './fields.ts';
import type { Health } from './health.ts';
import { current, failed, inProgress, unknown } from './health.ts';

/**
 * A CrashLoopBackOff turns Failed once a container has restarted this many times. The first crashes are
 * often a race with something applied in the same wave (a database, a Secret from another controller);
 * with the kubelet's back-off (10s, 20s, 40s) the third restart comes about a minute in: long enough for
 * such a race to settle, well inside a typical 3–5 minute wait.
 */
export const CRASH_LOOP_FAILED_RESTARTS = 3;

/**
 * Waiting reasons that do not clear by themselves: the image or the pod spec must change. Reporting them
 * Failed at once ends the wait at once instead of at the timeout. ErrImagePull is included although a
 * registry can fail transiently: the next reconcile retries anyway, and the common case is a typo.
 */
const FAIL_FAST_WAITING = new Set([
  'ImagePullBackOff',
  'ErrImagePull',
  'ErrImageNeverPull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
]);

/** Why a pod does not run, in its own words. `fatal` = no amount of waiting will fix it. */
export interface PodCause {
  reason: string;
  message: string;
  fatal: boolean;
}

interface ContainerState {
  reason: string;
  message: string;
  exitCode: number;
}

interface ContainerView {
  /** How to name it in a message: '' for a pod's only container, else `(container x)` or `(init container x)`. */
  label: string;
  restarts: number;
  waiting?: ContainerState;
  lastTerminated?: ContainerState;
  terminated?: ContainerState;
}

export function podHealth(pod: KubeObject): Health {
  const phase = str(pod, ['status', 'phase']);
  switch (phase) {
    case 'Succeeded':
      return current('pod completed successfully');
    case 'Failed': {
      // kstatus calls a failed pod Current ("completed"); a bare pod that failed is not coming back.
      const cause = podCause(pod);
      return failed(cause?.reason ?? 'PodFailed', cause?.message ?? 'pod failed');
    }
    case 'Unknown':
      return unknown('PodUnknown', str(pod, ['status', 'message']) || 'the node stopped reporting this pod');
    case '':
      return inProgress('PodNotObserved', 'waiting for a pod phase');
  }
  if (phase === 'Running' && condition(pod, 'Ready')?.status === 'True') return current('pod is ready');

  const cause = podCause(pod);
  if (cause) return cause.fatal ? failed(cause.reason, cause.message) : inProgress(cause.reason, cause.message);
  if (phase === 'Pending') {
    const waiting = containers(pod).find((c) => c.waiting)?.waiting?.reason;
    return inProgress('PodPending', waiting ? `pending: ${waiting}` : 'pending');
  }
  if (phase === 'Running') {
    const ready = condition(pod, 'Ready');
    return inProgress(ready?.reason ?? 'PodNotReady', ready?.message ?? 'running but not ready');
  }
  return unknown('UnknownPhase', `unknown pod phase ${phase}`);
}

/**
 * The most telling reason a pod is not running, or undefined when it is merely on its way. Fatal causes
 * come first across all containers, so a sidecar's ImagePullBackOff is not hidden behind a slow start.
 * Container termination messages are left out on purpose: they can hold application output (invariant 5).
 */
export function podCause(pod: KubeObject): PodCause | undefined {
  const views = containers(pod);
  if (str(pod, ['status', 'phase']) === 'Failed') return failedPodCause(pod, views);

  const waiting = views.flatMap((c) => (c.waiting?.reason ? [waitingCause(c, c.waiting)] : []));
  const fatal = waiting.find((c) => c.fatal);
  if (fatal) return fatal;
  const crashing = waiting.find((c) => c.reason === 'CrashLoopBackOff');
  if (crashing) return crashing;

  const scheduled = condition(pod, 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
    // Not fatal: a cluster autoscaler or a departing pod may free room; the scheduler's text says what is short.
    return { reason: 'Unschedulable', message: withReason('Unschedulable', scheduled.message), fatal: false };
  }

  const restarted = views.find((c) => c.restarts > 0 && c.lastTerminated && c.lastTerminated.exitCode !== 0);
  if (restarted?.lastTerminated) {
    const reason = restarted.lastTerminated.reason || 'Error';
    return { reason, message: `${reason}${restarted.label}: ${restartDetail(restarted, false)}`, fatal: false };
  }
  return undefined;
}

/**
 * A pod that runs but is not Ready (a readiness probe that keeps failing): not a cause podCause names, since
 * every pod passes through it while starting, but at a timeout the best there is to say which pod holds a
 * workload up. Never fatal.
 */
export function notReadyCause(pod: KubeObject): PodCause | undefined {
  if (str(pod, ['status', 'phase']) !== 'Running') return undefined;
  const ready = condition(pod, 'Ready');
  if (ready?.status !== 'False') return undefined;
  const reason = ready.reason || 'PodNotReady';
  return { reason, message: withReason(reason, ready.message ?? 'running but not ready'), fatal: false };
}

function waitingCause(c: ContainerView, waiting: ContainerState): PodCause {
  if (waiting.reason === 'CrashLoopBackOff') {
    // The kubelet's own text ("back-off 40s restarting failed container=…") says less than the exit code.
    return {
      reason: 'CrashLoopBackOff',
      message: `CrashLoopBackOff${c.label}: ${restartDetail(c, true)}`,
      fatal: c.restarts >= CRASH_LOOP_FAILED_RESTARTS,
    };
  }
  return {
    reason: waiting.reason,
    message: withReason(`${waiting.reason}${c.label}`, waiting.message),
    fatal: FAIL_FAST_WAITING.has(waiting.reason),
  };
}

function failedPodCause(pod: KubeObject, views: ContainerView[]): PodCause {
  // The pod's own reason (Evicted, DeadlineExceeded) beats a container's: it says why the pod stopped.
  const reason = str(pod, ['status', 'reason']);
  if (reason) return { reason, message: withReason(reason, str(pod, ['status', 'message'])), fatal: false };
  const exited = views.find((c) => c.terminated && c.terminated.exitCode !== 0);
  if (exited?.terminated) {
    const why = exited.terminated.reason || 'Error';
    return { reason: why, message: `${why}${exited.label}: exit code ${exited.terminated.exitCode}`, fatal: false };
  }
  return { reason: 'PodFailed', message: 'pod failed', fatal: false };
}

/** "restarted 3 times, last exit code 1 (Error)"; the reason is left out where it already leads the message. */
function restartDetail(c: ContainerView, withLastReason: boolean): string {
  const times = c.restarts === 1 ? '1 time' : `${c.restarts} times`;
  const last = c.lastTerminated;
  if (!last) return `restarted ${times}`;
  const why = withLastReason && last.reason ? ` (${last.reason})` : '';
  return `restarted ${times}, last exit code ${last.exitCode}${why}`;
}

/** Init containers first: while one of them waits, the app containers have not even been created. */
function containers(pod: KubeObject): ContainerView[] {
  const init = list(pod, ['status', 'initContainerStatuses']);
  const app = list(pod, ['status', 'containerStatuses']);
  const specCount = list(pod, ['spec', 'containers']).length;
  const onlyOne = init.length === 0 && app.length <= 1 && specCount <= 1;
  const view = (raw: unknown, isInit: boolean): ContainerView => {
    const name = str(raw, ['name']);
    const label = isInit ? ` (init container ${name})` : onlyOne ? '' : ` (container ${name})`;
    return {
      label,
      restarts: int(raw, ['restartCount'], 0),
      ...stateField('waiting', field(raw, 'state', 'waiting')),
      ...stateField('terminated', field(raw, 'state', 'terminated')),
      ...stateField('lastTerminated', field(raw, 'lastState', 'terminated')),
    };
  };
  return [...init.map((raw) => view(raw, true)), ...app.map((raw) => view(raw, false))];
}

function stateField(key: 'waiting' | 'terminated' | 'lastTerminated', raw: unknown): Partial<ContainerView> {
  if (typeof raw !== 'object' || raw === null) return {};
  return {
    [key]: { reason: str(raw, ['reason']), message: str(raw, ['message']), exitCode: int(raw, ['exitCode'], 0) },
  };
}
