/**
 * A Job gate's check (docs/adr/0042): the Job of this set, wave, gate, revision and attempt is created once —
 * as the template's ServiceAccount (or the controller's default one), so a tenant runs only what its own RBAC
 * lets it — and read on every check until it completes or fails. Its name is deterministic (core/rollout/gate-job),
 * so a restarted controller or a new leader finds the Job already started instead of starting another.
 */
import type { Gate } from '../../api/packagesyncset.ts';
import { isConflict, isNotFound, KubeApiError, type KubeClient } from '../../adapters/kube/client.ts';
import { gateJobName, gateJobObject, jobVerdict, type GateJobKey } from '../../core/rollout/gate-job.ts';
import type { GateResult } from '../../core/rollout/gates.ts';

const jobsPath = (namespace: string) => `/apis/batch/v1/namespaces/${encodeURIComponent(namespace)}/jobs`;

/** The API server's own words (reason and message, bounded): they name the field or the missing permission. */
const apiError = (e: unknown) =>
  e instanceof KubeApiError ? `${e.reason}: ${e.message.slice(0, 300)}` : e instanceof Error ? e.name : 'error';

export async function checkJobGate(
  client: KubeClient,
  set: { name: string; namespace: string; uid: string },
  key: GateJobKey,
  job: NonNullable<Gate['job']>,
  opts: { serviceAccount?: string; signal?: AbortSignal },
): Promise<GateResult> {
  const name = gateJobName(key);
  let found: { status?: { conditions?: { type: string; status: string; reason?: string }[] } } | undefined;
  try {
    found = await client.request('GET', `${jobsPath(set.namespace)}/${encodeURIComponent(name)}`, {
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } catch (e) {
    if (!isNotFound(e)) return { passed: false, message: `cannot read Job ${name}: ${apiError(e)}` };
  }
  if (!found) {
    const as = opts.serviceAccount ? `system:serviceaccount:${set.namespace}:${opts.serviceAccount}` : undefined;
    try {
      await client.request('POST', jobsPath(set.namespace), {
        body: gateJobObject(set, key, job),
        ...(as ? { impersonate: as } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } catch (e) {
      // AlreadyExists: another pass (or the previous leader) created it a moment ago; read it next time
      if (!isConflict(e))
        return { passed: false, message: `cannot create Job ${name}${as ? ` as ${as}` : ''}: ${apiError(e)}` };
    }
    return { passed: false, message: `Job ${name} started` };
  }
  const verdict = jobVerdict(found.status);
  if (verdict.state === 'succeeded') return { passed: true, message: `Job ${name} succeeded` };
  if (verdict.state === 'failed')
    return { passed: false, failed: true, message: `Job ${name} failed (${verdict.reason})` };
  return { passed: false, message: `Job ${name} running` };
}
