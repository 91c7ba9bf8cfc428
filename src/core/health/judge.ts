/**
 * The health wait's decisions, on what the engine read: which copy of an object to believe, which workloads
 * need their ReplicaSets and Pods read to explain them, each object's health, and the failure that ends a
 * wait. The engine (src/engine/wait.ts) only fetches and sleeps.
 */
import { Reason } from '../../api/reasons.ts';
import type { Failure } from '../failure.ts';
import { groupOf, refOf, type KubeObject, type ObjectRef } from '../object.ts';
import { celHealth, NO_HEALTH_RULES, type HealthRules } from './cel-health.ts';
import { computeHealth } from './compute.ts';
import { explainWorkload } from './explain.ts';
import { notFoundHealth, plural, type Health } from './health.ts';
import { describeUnhealthy, summarizeHealth, type HealthSummary, type ObjectHealth } from './summary.ts';

/** Kinds whose health is explained by the ReplicaSets and Pods they own. */
const WORKLOADS = new Set(['apps/Deployment', 'apps/StatefulSet', 'apps/DaemonSet', 'apps/ReplicaSet', 'batch/Job']);

export const isWorkload = (o: KubeObject): boolean => WORKLOADS.has(`${groupOf(o.apiVersion)}/${o.kind}`);

/** An object's health: its kind's spec.healthCheckExprs rule when there is one (it replaces kstatus), else kstatus. */
export function healthWith(obj: KubeObject, rules: HealthRules = NO_HEALTH_RULES): Health {
  const rule = rules.ruleFor(obj);
  return rule ? celHealth(rule, obj) : computeHealth(obj);
}

/** Health of objects as read once (no wait): the apply's copies, or the live ones. */
export function healthOf(objects: readonly KubeObject[], rules?: HealthRules): HealthSummary {
  return summarizeHealth(objects.map((o) => ({ object: refOf(o), health: healthWith(o, rules) })));
}

/**
 * The fresher of the read copy and the one the apply returned. A watch may not have delivered the apply's
 * own change yet: a copy of an older generation (same uid) is certainly stale. resourceVersions are opaque
 * and not compared. A missing copy counts as "not delivered yet" only for a short grace after the apply.
 */
export function freshestCopy(
  read: KubeObject | undefined,
  known: KubeObject | undefined,
  inGrace: boolean,
): KubeObject | undefined {
  if (!known) return read;
  if (!read) return inGrace ? known : undefined;
  if (read.metadata.uid === known.metadata.uid) {
    return (read.metadata.generation ?? 0) >= (known.metadata.generation ?? 0) ? read : known;
  }
  // Recreated (a forced replace, or by someone else): the later creation is the one that exists.
  const created = (o: KubeObject) => String(o.metadata.creationTimestamp ?? '');
  return created(read) > created(known) ? read : known;
}

/** The workloads among these copies that are not Current: their children are read to name the cause. */
export function workloadsToExplain(
  copies: readonly (KubeObject | undefined)[],
  rules: HealthRules = NO_HEALTH_RULES,
): KubeObject[] {
  return copies.filter(
    (o): o is KubeObject => !!o && isWorkload(o) && !rules.ruleFor(o) && computeHealth(o).status !== 'Current',
  );
}

/**
 * Each object's health from its copy (undefined: it does not exist) and, for workloads that are not Current,
 * the ReplicaSets and Pods read for them.
 */
export function judgeHealth(
  refs: readonly ObjectRef[],
  copies: readonly (KubeObject | undefined)[],
  children: readonly KubeObject[],
  rules: HealthRules = NO_HEALTH_RULES,
): ObjectHealth[] {
  return refs.map((ref, i) => {
    const obj = copies[i];
    if (!obj) return { object: ref, health: notFoundHealth() };
    const rule = rules.ruleFor(obj);
    if (rule) return { object: ref, health: celHealth(rule, obj) };
    const health = computeHealth(obj);
    if (health.status === 'Current' || !isWorkload(obj)) return { object: ref, health };
    return { object: ref, health: explainWorkload(obj, children) };
  });
}

/** Why a wait ended without every object Current: one failed (fail fast), or time ran out. */
export function healthFailure(
  list: readonly ObjectHealth[],
  summary: HealthSummary,
  why: 'failed' | 'timeout',
): Failure {
  const first = summary.first?.object;
  const notCurrent = summary.total - summary.counts.Current;
  const message =
    why === 'timeout'
      ? `timeout waiting for health: ${plural(notCurrent, 'object')} not Current: ${describeUnhealthy(list)}`
      : `health check failed: ${describeUnhealthy(list.filter((o) => o.health.status === 'Failed'))}${
          notCurrent > summary.counts.Failed
            ? ` (also ${plural(notCurrent - summary.counts.Failed, 'object')} not Current yet)`
            : ''
        }`;
  return { reason: Reason.HealthCheckFailed, message, ...(first ? { object: first } : {}), terminal: false };
}
