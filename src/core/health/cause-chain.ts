import type { KubeObject } from '../object.ts';
import { describeRef, refOf, type ObjectRef } from '../object.ts';
import { computeHealth } from './compute.ts';
import { workloadCause } from './explain.ts';
import type { ObjectHealth } from './summary.ts';
import { isWorkload } from './judge.ts';

/** A Ready condition as `why` shows it. */
export interface ReadyView {
  status: string;
  reason?: string;
  message?: string;
}

export interface ChainInput {
  /** `namespace/name` of the PackageSync and its Ready condition. */
  packageSync: { name: string; ready?: ReadyView };
  /** dependsOn targets, with their Ready condition (undefined = not found). */
  dependencies: readonly { name: string; ready?: ReadyView }[];
  /** Unhealthy workloads, each with the ReplicaSets and Pods listed in its namespace. */
  workloads: readonly { workload: KubeObject; children: readonly KubeObject[] }[];
}

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

/** A link and how `why` prints it (depth = indent). */
interface Step {
  link: CauseLink;
  depth: number;
  text: string;
}

/**
 * The chain from a PackageSync to the first real cause, one line a step (depth = indent):
 *   PackageSync team-a/web  Ready=False HealthCheckFailed
 *   └ Deployment/team-a/web  InProgress: 0 of 2 replicas available
 *     └ ReplicaSet/team-a/web-5d9f
 *       └ Pod/team-a/web-5d9f-abcde  ImagePullBackOff: Back-off pulling image "registry.local/web:2"
 * A blocking dependency comes first: while it is not Ready nothing below was even tried.
 */
export function causeChain(input: ChainInput): string[] {
  const lines = [`PackageSync ${input.packageSync.name}  ${readyText(input.packageSync.ready)}`];
  for (const dep of input.dependencies) {
    if (dep.ready?.status === 'True') continue;
    lines.push(`└ dependsOn ${dep.name}  ${dep.ready ? readyText(dep.ready) : 'not found'}`);
  }
  for (const { workload, children } of input.workloads) {
    for (const s of workloadSteps(workload, children)) lines.push(`${'  '.repeat(s.depth - 1)}└ ${s.text}`);
  }
  return lines;
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

function readyText(ready: ReadyView | undefined): string {
  if (!ready) return 'Ready=Unknown';
  return [`Ready=${ready.status}`, ready.reason].filter(Boolean).join(' ');
}

function workloadSteps(workload: KubeObject, children: readonly KubeObject[]): Step[] {
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
