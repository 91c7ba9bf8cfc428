/**
 * Step 6: wait until every applied object is Current (kstatus), naming the cause when it is not.
 * Each round reads the package's objects with one labelled LIST per (kind, namespace), plus the Pods and
 * ReplicaSets of workloads that are not yet Current, so a Deployment stuck in ImagePullBackOff says so.
 * A Failed object ends the wait at once; the timeout ends it with every unhealthy object named.
 */
import { Reason } from '../api/reasons.ts';
import type { Objects } from '../adapters/kube/objects.ts';
import type { Failure } from '../core/failure.ts';
import {
  computeHealth,
  explainWorkload,
  summarizeHealth,
  type HealthSummary,
  type ObjectHealth,
} from '../core/health/index.ts';
import { describeRef, groupOf, refKey, refOf, type KubeObject, type ObjectRef } from '../core/object.ts';
import type { Owner } from '../core/plan/ownership.ts';
import { ownerSelector } from './live.ts';

const WORKLOADS = new Set(['apps/Deployment', 'apps/StatefulSet', 'apps/DaemonSet', 'apps/ReplicaSet', 'batch/Job']);

export interface WaitOptions {
  impersonate?: string;
  signal: AbortSignal;
  timeoutMs: number;
  /** Called when the summary changes, so status can say what is still in progress. */
  onProgress?: (summary: HealthSummary) => Promise<void> | void;
}

export type WaitResult = { ok: true; summary: HealthSummary } | { ok: false; summary: HealthSummary; failure: Failure };

/** Health of the objects from what the apply just stored: often enough to skip the wait entirely. */
export function healthOf(objects: KubeObject[]): HealthSummary {
  return summarizeHealth(objects.map((o) => ({ object: refOf(o), health: computeHealth(o) })));
}

export async function waitForHealth(
  objects: Objects,
  desired: KubeObject[],
  owner: Owner,
  opts: WaitOptions,
): Promise<WaitResult> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastMessage = '';
  let delay = 250;
  for (;;) {
    const summary = await observe(objects, desired, owner, opts);
    if (summary.status === 'Current') return { ok: true, summary };
    if (summary.counts.Failed > 0) {
      return { ok: false, summary, failure: healthFailure(summary, 'failed') };
    }
    if (Date.now() >= deadline) return { ok: false, summary, failure: healthFailure(summary, 'timeout') };
    if (opts.signal.aborted) {
      return {
        ok: false,
        summary,
        failure: { reason: Reason.HealthCheckFailed, message: 'health wait cancelled', terminal: false },
      };
    }
    if (summary.message !== lastMessage) {
      lastMessage = summary.message;
      await opts.onProgress?.(summary);
    }
    await sleep(Math.min(delay, Math.max(0, deadline - Date.now())), opts.signal);
    delay = Math.min(delay * 2, 2000);
  }
}

async function observe(
  objects: Objects,
  desired: KubeObject[],
  owner: Owner,
  opts: WaitOptions,
): Promise<HealthSummary> {
  const groups = new Map<string, { group: string; kind: string; namespace: string }>();
  for (const o of desired) {
    const r = refOf(o);
    groups.set(`${r.group}/${r.kind}/${r.namespace}`, { group: r.group, kind: r.kind, namespace: r.namespace });
  }
  const live = new Map<string, KubeObject>();
  await Promise.all(
    [...groups.values()].map(async (g) => {
      const m = await objects.discovery.mapping(g.group, g.kind);
      if (!m) return;
      for (const o of await objects.list(m, m.namespaced ? g.namespace : '', ownerSelector(owner), opts))
        live.set(refKey(refOf(o)), o);
    }),
  );
  const results: ObjectHealth[] = await Promise.all(
    desired.map(async (d) => {
      const ref = refOf(d);
      const obj = live.get(refKey(ref));
      if (!obj)
        return {
          object: ref,
          health: { status: 'NotFound' as const, reason: 'NotFound', message: 'object not found' },
        };
      const health = computeHealth(obj);
      if (health.status === 'Current' || !WORKLOADS.has(`${groupOf(obj.apiVersion)}/${obj.kind}`))
        return { object: ref, health };
      return { object: ref, health: explainWorkload(obj, await childrenOf(objects, obj, opts)) };
    }),
  );
  return summarizeHealth(results);
}

/** The Pods (and ReplicaSets, for a Deployment) selected by a workload's selector. */
async function childrenOf(objects: Objects, workload: KubeObject, opts: WaitOptions): Promise<KubeObject[]> {
  const spec = workload.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined;
  const labels = spec?.selector?.matchLabels;
  if (!labels || Object.keys(labels).length === 0) return [];
  const selector = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const ns = workload.metadata.namespace ?? '';
  const kinds: [string, string][] = [['', 'Pod']];
  if (workload.kind === 'Deployment') kinds.push(['apps', 'ReplicaSet']);
  const lists = await Promise.all(
    kinds.map(async ([group, kind]) => {
      const m = await objects.discovery.mapping(group, kind);
      return m ? objects.list(m, ns, selector, opts).catch(() => []) : [];
    }),
  );
  return lists.flat();
}

function healthFailure(summary: HealthSummary, why: 'failed' | 'timeout'): Failure {
  const bad = summary.message;
  const first: ObjectRef | undefined = summary.first?.object;
  return {
    reason: Reason.HealthCheckFailed,
    message: why === 'timeout' ? `timeout waiting for health: ${bad}` : `health check failed: ${bad}`,
    ...(first ? { object: first } : {}),
    terminal: false,
  };
}

export const describeFirst = (summary: HealthSummary): string =>
  summary.first ? describeRef(summary.first.object) : '';

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });
}
