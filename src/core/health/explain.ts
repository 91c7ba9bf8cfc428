import type { KubeObject } from '../object.ts';
import { describeRef, groupOf, refOf } from '../object.ts';
import { computeHealth } from './compute.ts';
import { condition, str } from './fields.ts';
import type { Health } from './health.ts';
import { trimDot } from './health.ts';
import { isOwnedBy } from './owners.ts';
import { notReadyCause, podCause } from './pod.ts';

/** A reason found below the workload; `fatal` may end the wait at once. */
export interface WorkloadCause {
  reason: string;
  /** `Pod web-7d9f-abcde: ImagePullBackOff: …`: the child named, as the workload's message quotes it. */
  message: string;
  fatal: boolean;
  /** The child the cause was found on (a Pod, or a ReplicaSet that cannot create pods) … */
  at: KubeObject;
  /** … in its own words (`ImagePullBackOff: Back-off pulling image "x"`). */
  detail: string;
  /** The ReplicaSet between a Deployment and the Pod, when there is one. */
  via?: KubeObject;
}

/** A pod that belongs to the workload; `current` = made from the workload's present spec. */
interface OwnedPod {
  pod: KubeObject;
  current: boolean;
}

const REVISION = 'deployment.kubernetes.io/revision';

/**
 * The health of a Deployment, StatefulSet, DaemonSet, ReplicaSet or Job, explained by its children (the
 * ReplicaSets and Pods the caller listed in its namespace). When the workload is not Current, the first
 * telling cause found below it is appended to the message:
 *   Deployment/team-a/web: 0 of 2 replicas available; Pod web-7d9f-abcde: ImagePullBackOff: Back-off …
 * A fatal cause (see podCause) in a pod of the present spec turns InProgress into Failed, so a wait can
 * end at once instead of at its timeout. Pods from an older spec are still named, but never fail the
 * workload: a fix being rolled out would otherwise fail on the very pods it replaces.
 */
export function explainWorkload(workload: KubeObject, children: readonly KubeObject[]): Health {
  const health = computeHealth(workload);
  const name = describeRef(refOf(workload));
  const plain: Health = { ...health, message: `${name}: ${health.message}` };
  if (health.status !== 'InProgress' && health.status !== 'Failed') return plain;
  // Until the controller has seen the new spec, every child still describes the old one.
  if (health.reason === 'LatestGenerationNotObserved' || health.reason === 'NotObserved') return plain;

  const cause = workloadCause(workload, children);
  if (!cause) return plain;
  const message = `${name}: ${trimDot(health.message)}; ${trimDot(cause.message)}`;
  if (health.status === 'Failed') return { status: 'Failed', reason: health.reason ?? cause.reason, message };
  return { status: cause.fatal ? 'Failed' : 'InProgress', reason: cause.reason, message };
}

/**
 * The first telling cause below a workload, with the child it was found on: a fatal one in a pod of the
 * present spec first, then a ReplicaSet that cannot create pods, then any pod's. The wait's message and
 * `why`'s chain (cause-chain.ts) both come from here, so they name the same pod.
 */
export function workloadCause(workload: KubeObject, children: readonly KubeObject[]): WorkloadCause | undefined {
  let pods: OwnedPod[];
  let via: KubeObject | undefined;
  const extra: WorkloadCause[] = [];
  switch (`${groupOf(workload.apiVersion)}/${workload.kind}`) {
    case 'apps/Deployment':
    case 'extensions/Deployment': {
      const rs = newestReplicaSet(workload, children);
      if (!rs) return undefined;
      const failure = condition(rs, 'ReplicaFailure');
      if (failure?.status === 'True') {
        const text = failure.message ?? failure.reason ?? 'pods cannot be created';
        extra.push({
          reason: failure.reason ?? 'ReplicaFailure',
          message: `ReplicaSet ${rs.metadata.name}: ${text}`,
          fatal: false,
          at: rs,
          detail: text,
        });
      }
      via = rs;
      pods = podsOf(rs, children).map((pod) => ({ pod, current: true }));
      break;
    }
    case 'apps/StatefulSet': {
      const revision = str(workload, ['status', 'updateRevision']);
      pods = podsOf(workload, children).map((pod) => ({
        pod,
        current: podLabel(pod, 'controller-revision-hash') === revision,
      }));
      break;
    }
    case 'apps/DaemonSet':
    case 'extensions/DaemonSet': {
      // DaemonSet status names no revision; its pods carry the generation of the template they were made from.
      // A generation bumped by a non-template change makes pods look older than they are: a safe mistake.
      const generation = String(workload.metadata.generation ?? '');
      pods = podsOf(workload, children).map((pod) => ({
        pod,
        current: podLabel(pod, 'pod-template-generation') === generation,
      }));
      break;
    }
    case 'apps/ReplicaSet':
    case 'extensions/ReplicaSet':
    case 'batch/Job':
      // Their pod templates do not change under running pods (a Job's is immutable).
      pods = podsOf(workload, children).map((pod) => ({ pod, current: true }));
      break;
    default:
      return undefined;
  }

  const causes = [...pods]
    .filter(({ pod }) => !pod.metadata.deletionTimestamp) // already being replaced
    .sort((a, b) => Number(b.current) - Number(a.current)) // stable: input order within each group
    .flatMap(({ pod, current }): WorkloadCause[] => {
      const cause = podCause(pod) ?? notReadyCause(pod);
      if (!cause) return [];
      const message = `Pod ${pod.metadata.name}: ${cause.message}`;
      const fatal = current && cause.fatal;
      return [{ reason: cause.reason, message, fatal, at: pod, detail: cause.message, ...(via ? { via } : {}) }];
    });
  return causes.find((c) => c.fatal) ?? extra[0] ?? causes[0];
}

/**
 * The ReplicaSet of the Deployment's present revision: the one whose revision annotation matches the
 * Deployment's, else the highest revision (the controller writes both in the same sync).
 */
function newestReplicaSet(deployment: KubeObject, children: readonly KubeObject[]): KubeObject | undefined {
  const owned = children.filter((c) => c.kind === 'ReplicaSet' && isOwnedBy(c, deployment));
  const wanted = deployment.metadata.annotations?.[REVISION];
  const exact = wanted === undefined ? undefined : owned.find((rs) => rs.metadata.annotations?.[REVISION] === wanted);
  if (exact) return exact;
  const revision = (rs: KubeObject) => Number.parseInt(rs.metadata.annotations?.[REVISION] ?? '', 10) || 0;
  return owned.reduce<KubeObject | undefined>(
    (best, rs) => (!best || revision(rs) > revision(best) ? rs : best),
    undefined,
  );
}

function podsOf(owner: KubeObject, children: readonly KubeObject[]): KubeObject[] {
  return children.filter((c) => c.kind === 'Pod' && c.apiVersion === 'v1' && isOwnedBy(c, owner));
}

function podLabel(pod: KubeObject, key: string): string | undefined {
  return pod.metadata.labels?.[key];
}
