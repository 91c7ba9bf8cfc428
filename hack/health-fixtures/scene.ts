/**
 * What the scenes of hack/health-fixtures share: the context the capture gives them, and manifests of
 * workloads whose Pods fail on purpose through the kwok stages in hack/kwok-stages/pod-failures.yaml.
 */
import type { KubeObject } from '../../src/core/object.ts';

export interface SceneContext {
  namespace: string;
  /** Server-side applies every YAML document (namespaced ones into the scene's namespace). */
  apply(yaml: string): Promise<void>;
  get(apiVersion: string, kind: string, name: string, namespace?: string): Promise<KubeObject | undefined>;
  list(apiVersion: string, kind: string, selector?: string): Promise<KubeObject[]>;
  request(method: string, path: string, body?: unknown): Promise<unknown>;
  until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs?: number): Promise<T>;
  /** Writes `to` wherever `from` appears: for names made up per capture (a PV, a Pod that was refused). */
  rename(from: string, to: string): void;
}

export interface Scene {
  name: string;
  run(ctx: SceneContext): Promise<Record<string, KubeObject[]>>;
  cleanup?(ctx: SceneContext): Promise<void>;
}

export const FAILURE = 'e2e.packagesync.io/pod-failure';
export type Failure = 'ImagePullBackOff' | 'CrashLoopBackOff' | 'Error' | 'NotReady';

export interface PodOptions {
  failure?: Failure;
  annotations?: Record<string, string>;
  nodeSelector?: Record<string, string>;
  image?: string;
}

export function template(app: string, o: PodOptions, restartPolicy = 'Always'): Record<string, unknown> {
  return {
    metadata: { labels: { app, ...(o.failure ? { [FAILURE]: o.failure } : {}) }, annotations: o.annotations },
    spec: {
      restartPolicy,
      ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
      containers: [{ name: app, image: o.image ?? `registry.local/${app}:1.0` }],
    },
  };
}

export const yaml = (o: unknown) => JSON.stringify(o);

export const workload = (
  kind: string,
  name: string,
  replicas: number,
  o: PodOptions,
  extra: Record<string, unknown> = {},
) =>
  yaml({
    apiVersion: 'apps/v1',
    kind,
    metadata: { name },
    spec: {
      ...(kind === 'DaemonSet' ? {} : { replicas }),
      ...(kind === 'StatefulSet' ? { serviceName: name } : {}),
      selector: { matchLabels: { app: name } },
      template: template(name, o),
      ...extra,
    },
  });

export const job = (name: string, o: PodOptions, extra: Record<string, unknown> = {}) =>
  yaml({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: { backoffLimit: 0, template: template(name, o, 'Never'), ...extra },
  });

export function pod(name: string, o: PodOptions, restartPolicy = 'Always'): string {
  const t = template('web', o, restartPolicy) as { metadata: Record<string, unknown>; spec: unknown };
  return yaml({ apiVersion: 'v1', kind: 'Pod', metadata: { ...t.metadata, name }, spec: t.spec });
}

export const status = (o: KubeObject | undefined) => (o?.status ?? {}) as Record<string, unknown>;
export const conditionOf = (o: KubeObject | undefined, type: string) =>
  ((status(o).conditions ?? []) as { type: string; status: string; reason?: string }[]).find((c) => c.type === type);
export const waitingReason = (p: KubeObject) =>
  ((status(p).containerStatuses ?? []) as { state?: { waiting?: { reason?: string } } }[])[0]?.state?.waiting?.reason;
export const restarts = (p: KubeObject) =>
  ((status(p).containerStatuses ?? []) as { restartCount?: number }[])[0]?.restartCount;

/** A workload, its ReplicaSets (for a Deployment) and Pods: what explainWorkload reads. */
export async function scene(ctx: SceneContext, kind: string, name: string): Promise<KubeObject[]> {
  const main = (await ctx.get(kind === 'Job' ? 'batch/v1' : 'apps/v1', kind, name))!;
  const rs = kind === 'Deployment' ? await ctx.list('apps/v1', 'ReplicaSet', `app=${name}`) : [];
  const pods = await ctx.list('v1', 'Pod', kind === 'Job' ? `job-name=${name}` : `app=${name}`);
  return [main, ...rs, ...pods];
}

export const deploymentOf = (ctx: SceneContext, name: string) => ctx.get('apps/v1', 'Deployment', name);
