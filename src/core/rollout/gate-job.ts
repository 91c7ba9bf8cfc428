/**
 * A Job gate's Job (docs/adr/0042): one per set, wave, gate, revision and resume attempt, under a name derived
 * from exactly those, so a controller that restarts (or a new leader) finds the Job it started instead of starting
 * a second. And the verdict read from a Job's status conditions, as kubectl wait reads them.
 */
import { createHash } from 'node:crypto';
import { API_VERSION } from '../../api/packagesync.ts';
import { GATE_LABEL, SET_KIND, SET_LABEL, type Gate } from '../../api/packagesyncset.ts';
import { setLabelValue } from './targets.ts';

/** Job names end up in the Pods' `job-name` label: at most 63 characters. */
const MAX_JOB_NAME = 63;

export interface GateJobKey {
  set: string;
  wave: string;
  gate: string;
  revision: string;
  attempt: number;
}

export function gateJobName(k: GateJobKey): string {
  const hash = createHash('sha256')
    .update(`${k.set}\n${k.wave}\n${k.gate}\n${k.revision}\n${k.attempt}`)
    .digest('hex')
    .slice(0, 10);
  const prefix = `${k.set}-${k.wave}-${k.gate}`.slice(0, MAX_JOB_NAME - hash.length - 1).replace(/[-.]+$/, '');
  return `${prefix}-${hash}`;
}

export function gateJobObject(
  set: { name: string; namespace: string; uid: string },
  key: GateJobKey,
  job: NonNullable<Gate['job']>,
): { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec: Record<string, unknown> } {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: gateJobName(key),
      namespace: set.namespace,
      labels: { ...(job.metadata?.labels ?? {}), [SET_LABEL]: setLabelValue(set.name), [GATE_LABEL]: key.gate },
      annotations: { ...(job.metadata?.annotations ?? {}), 'packagesync.io/revision': key.revision },
      // not a controller reference and no blockOwnerDeletion: creating it needs no rights on the set itself
      ownerReferences: [{ apiVersion: API_VERSION, kind: SET_KIND, name: set.name, uid: set.uid }],
    },
    spec: structuredClone(job.spec),
  };
}

export type JobVerdict = { state: 'succeeded' } | { state: 'failed'; reason: string } | { state: 'running' };

/** Complete=True passed; Failed=True failed (its reason: BackoffLimitExceeded, DeadlineExceeded, …); else running. */
export function jobVerdict(
  status: { conditions?: { type: string; status: string; reason?: string }[] } | undefined,
): JobVerdict {
  const cond = (type: string) => status?.conditions?.find((c) => c.type === type && c.status === 'True');
  if (cond('Complete')) return { state: 'succeeded' };
  const failed = cond('Failed');
  if (failed) return { state: 'failed', reason: (failed.reason ?? 'Failed').slice(0, 64) };
  return { state: 'running' };
}
