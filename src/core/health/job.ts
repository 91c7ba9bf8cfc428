import type { KubeObject } from '../object.ts';
import { condition, int, str } from './fields.ts';
import type { Health } from './health.ts';
import { current, failed, inProgress } from './health.ts';

/**
 * kstatus calls a running Job Current, so "wait until Current" returns before a migration Job has done its
 * work. Applying a Job means "run this to completion": it is InProgress until Complete, Failed on Failed.
 */
export function jobHealth(job: KubeObject): Health {
  const parallelism = int(job, ['spec', 'parallelism'], 1);
  const completions = int(job, ['spec', 'completions'], parallelism);
  const succeeded = int(job, ['status', 'succeeded'], 0);
  const active = int(job, ['status', 'active'], 0);
  const failures = int(job, ['status', 'failed'], 0);

  const isTrue = (type: string) => {
    const c = condition(job, type);
    return c?.status === 'True' ? c : undefined;
  };

  // FailureTarget (1.31+) is set as soon as the controller decides to fail, before pods are cleaned up and
  // Failed appears; taking it ends the wait a little earlier with the same reason.
  const failedCondition = isTrue('Failed') ?? isTrue('FailureTarget');
  if (failedCondition) {
    const reason = failedCondition.reason ?? 'JobFailed';
    const detail = failedCondition.message ?? `${failures} failed`;
    return failed(reason, `${reason}: ${detail}`);
  }
  // SuccessCriteriaMet (1.31+) likewise precedes Complete once a success policy is met.
  if (isTrue('Complete') ?? isTrue('SuccessCriteriaMet')) {
    return current(`completed: ${succeeded} of ${completions} succeeded`);
  }
  // A suspended Job waits for whoever suspended it (often a queueing controller such as Kueue). kstatus
  // says Current; so do we, or a wait on it would only ever time out.
  if (isTrue('Suspended')) return current('suspended');

  if (!str(job, ['status', 'startTime'])) return inProgress('JobNotStarted', 'not started');
  return inProgress(
    'JobRunning',
    `running: ${succeeded} of ${completions} succeeded, ${active} active, ${failures} failed`,
  );
}
