/**
 * What the health e2e tests share: manifests of workloads that fail on purpose through the kwok stages in
 * hack/kwok-stages/pod-failures.yaml, and readers of the status they leave.
 */
import type { PackageSync } from '../../src/api/packagesync.ts';
import { conditionOf } from '../../src/core/status.ts';
import { getPackageSync } from './controller.ts';

/** The label the kwok failure stages select on; its value picks the failure. */
export const POD_FAILURE = 'e2e.packagesync.io/pod-failure';
export type PodFailure = 'ImagePullBackOff' | 'CrashLoopBackOff' | 'Error' | 'NotReady';

interface WorkloadOptions {
  replicas?: number;
  failure?: PodFailure;
  /** A nodeSelector no Node matches: the real scheduler reports Unschedulable. */
  unschedulable?: boolean;
  /** Pod template annotations (e.g. e2e.packagesync.io/restart-delay). */
  annotations?: Record<string, string>;
}

function podTemplate(app: string, o: WorkloadOptions, restartPolicy?: string): string[] {
  const labels = { app, ...(o.failure ? { [POD_FAILURE]: o.failure } : {}) };
  return [
    '  template:',
    `    metadata: {labels: ${JSON.stringify(labels)}, annotations: ${JSON.stringify(o.annotations ?? {})}}`,
    '    spec:',
    ...(restartPolicy ? [`      restartPolicy: ${restartPolicy}`] : []),
    ...(o.unschedulable ? ['      nodeSelector: {e2e.packagesync.io/no-such-node: "true"}'] : []),
    `      containers: [{name: app, image: "registry.local/${app}:1"}]`,
  ];
}

export function deployment(name: string, o: WorkloadOptions = {}): string {
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    `metadata: {name: ${name}}`,
    'spec:',
    `  replicas: ${o.replicas ?? 1}`,
    `  selector: {matchLabels: {app: ${name}}}`,
    ...podTemplate(name, o),
    '',
  ].join('\n');
}

export function job(name: string, o: WorkloadOptions & { backoffLimit?: number } = {}): string {
  return [
    'apiVersion: batch/v1',
    'kind: Job',
    `metadata: {name: ${name}}`,
    'spec:',
    `  backoffLimit: ${o.backoffLimit ?? 0}`,
    ...podTemplate(name, o, 'Never'),
    '',
  ].join('\n');
}

export const configMap = (name: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: v}\n`;

/**
 * A CRD without a status subresource, so a package can ship an instance whose status says Ready=False: a
 * stand-in for a custom resource whose controller reports it is not ready.
 */
/** A Gadget CRD in `group`; `statusSubresource`: status written only through /status, as a controller would. */
export function gadgetCRD(group: string, opts: { statusSubresource?: boolean } = {}): string {
  return [
    'apiVersion: apiextensions.k8s.io/v1',
    'kind: CustomResourceDefinition',
    `metadata: {name: gadgets.${group}}`,
    'spec:',
    `  group: ${group}`,
    '  names: {kind: Gadget, plural: gadgets, singular: gadget}',
    '  scope: Namespaced',
    '  versions:',
    '    - name: v1',
    '      served: true',
    '      storage: true',
    ...(opts.statusSubresource ? ['      subresources: {status: {}}'] : []),
    '      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}',
    '',
  ].join('\n');
}

export function notReadyGadget(group: string, name: string, message: string): string {
  return [
    `apiVersion: ${group}/v1`,
    'kind: Gadget',
    `metadata: {name: ${name}}`,
    'spec: {size: 1}',
    'status:',
    `  conditions: [{type: Ready, status: "False", reason: BackendUnreachable, message: "${message}"}]`,
    '',
  ].join('\n');
}

export const condition = (ps: PackageSync | undefined, type: string) => conditionOf(ps?.status, type);

/** Every status the PackageSync shows, sampled until `until` holds: what a `kubectl get -w` would have seen. */
export async function watchStatus(
  namespace: string,
  name: string,
  until: (ps: PackageSync) => boolean,
  timeoutMs = 60_000,
): Promise<{ seen: PackageSync[]; last: PackageSync }> {
  const seen: PackageSync[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ps = await getPackageSync(namespace, name);
    if (ps && seen.at(-1)?.metadata.resourceVersion !== ps.metadata.resourceVersion) seen.push(ps);
    if (ps && until(ps)) return { seen, last: ps };
    if (Date.now() > deadline) {
      const conditions = JSON.stringify(ps?.status?.conditions ?? null);
      throw new Error(
        `PackageSync ${namespace}/${name}: condition not reached in ${timeoutMs} ms; last: ${conditions}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stalled with HealthCheckFailed, for the current generation. */
export const stalledOnHealth = (ps: PackageSync): boolean =>
  condition(ps, 'Stalled')?.status === 'True' &&
  condition(ps, 'Stalled')?.reason === 'HealthCheckFailed' &&
  ps.status?.observedGeneration === ps.metadata.generation;

export const readyAt =
  (sha?: string) =>
  (ps: PackageSync): boolean =>
    condition(ps, 'Ready')?.status === 'True' &&
    ps.status?.observedGeneration === ps.metadata.generation &&
    (!sha || ps.status?.lastAppliedRevision?.endsWith(sha) === true);
