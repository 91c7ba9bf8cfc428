import type { KubeObject } from '../object.ts';
import { describeRef, refOf, type ObjectRef } from '../object.ts';
import { computeHealth } from './compute.ts';
import { workloadCause } from './explain.ts';
import type { ObjectHealth } from './summary.ts';
import { isWorkload } from './judge.ts';

/** One step of a chain as data: what status.cause holds (see boundedCause). */
export interface CauseLink {
  /** `Deployment`, `Pod`; `Kind.group` for custom groups, as describeRef names them. */
  kind: string;
  namespace?: string;
  name: string;
  /** PascalCase, as the object's own status says it: InProgress, ImagePullBackOff, ReplicaFailure. */
  reason?: string;
  message?: string;
}

/** A link and how `why` prints it (depth below the workload's package = indent). */
export interface Step {
  link: CauseLink;
  depth: number;
  text: string;
}

/**
 * The chain below the object that ended a health wait (the summary's first): the object, then for a workload
 * its ReplicaSet and the Pod with the cause. `copy` is the object as read (undefined: not found); `children`
 * the ReplicaSets and Pods read for workloads. What the Run writes to status.cause.
 */
export function healthCause(
  first: ObjectHealth,
  copy: KubeObject | undefined,
  children: readonly KubeObject[],
): CauseLink[] {
  if (copy && isWorkload(copy)) return workloadSteps(copy, children).map((s) => s.link);
  const { health } = first;
  const prefix = `${describeRef(first.object)}: `;
  const message = health.message.startsWith(prefix) ? health.message.slice(prefix.length) : health.message;
  return [link(first.object, health.reason ?? health.status, message)];
}

/** A workload not Current, then its ReplicaSet and the Pod that says why (core/health/explain.ts). */
export function workloadSteps(workload: KubeObject, children: readonly KubeObject[]): Step[] {
  const health = computeHealth(workload);
  const ref = refOf(workload);
  const steps: Step[] = [
    {
      link: link(ref, health.reason ?? health.status, health.message),
      depth: 1,
      text: `${describeRef(ref)}  ${health.status}: ${health.message}`,
    },
  ];
  if (health.status === 'Current') return steps;
  const cause = workloadCause(workload, children);
  if (!cause) return steps;
  if (cause.via) {
    const via = refOf(cause.via);
    steps.push({ link: link(via), depth: 2, text: describeRef(via) });
  }
  const at = refOf(cause.at);
  steps.push({
    link: link(at, cause.reason, cause.detail),
    depth: cause.via ? 3 : 2,
    text: `${describeRef(at)}  ${cause.detail}`,
  });
  return steps;
}

function link(ref: ObjectRef, reason?: string, message?: string): CauseLink {
  const named = describeRef(ref);
  const kind = named.slice(0, named.indexOf('/'));
  return {
    kind,
    ...(ref.namespace ? { namespace: ref.namespace } : {}),
    name: ref.name,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
  };
}
