/**
 * kstatus vocabulary (sigs.k8s.io/cli-utils pkg/kstatus/status), so every kstatus reader agrees with us:
 * Current = reconciled and healthy; InProgress = still converging; Failed = will not converge without a
 * change; Terminating = being deleted; NotFound = absent (decided by the caller, who did the read);
 * Unknown = the object says something the rules cannot read.
 */
export type HealthStatus = 'Current' | 'InProgress' | 'Failed' | 'Terminating' | 'NotFound' | 'Unknown';

export interface Health {
  status: HealthStatus;
  /** PascalCase, e.g. ProgressDeadlineExceeded, ImagePullBackOff; absent when Current says it all. */
  reason?: string;
  /** One line a user can act on, without the object's name (callers prefix it where needed). */
  message: string;
}

/** Most severe first: the order summaries pick the status and the object to name. */
export const HEALTH_SEVERITY: readonly HealthStatus[] = [
  'Failed',
  'NotFound',
  'Unknown',
  'Terminating',
  'InProgress',
  'Current',
];

export const current = (message: string): Health => ({ status: 'Current', message });
export const inProgress = (reason: string, message: string): Health => ({ status: 'InProgress', reason, message });
export const failed = (reason: string, message: string): Health => ({ status: 'Failed', reason, message });
export const unknown = (reason: string, message: string): Health => ({ status: 'Unknown', reason, message });
/** For the caller whose read came back 404: computeHealth only ever sees objects that exist. */
export const notFoundHealth = (): Health => ({ status: 'NotFound', reason: 'NotFound', message: 'object not found' });

export function isHealthy(health: Health): boolean {
  return health.status === 'Current';
}

/**
 * True when waiting longer cannot help: the object needs a new input (same meaning as Failure.terminal).
 * A wait loop ends when every object is healthy or any is terminal.
 */
export function isTerminal(health: Health): boolean {
  return health.status === 'Failed';
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** Drops a trailing full stop, so controller messages can be joined with "; " and put in parentheses. */
export function trimDot(message: string): string {
  return message.endsWith('.') ? message.slice(0, -1) : message;
}
