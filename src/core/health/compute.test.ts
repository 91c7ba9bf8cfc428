import { describe, expect, it } from 'vitest';
import { computeHealth } from './index.ts';
import type { HealthStatus } from './index.ts';
import { fixture, fixtureNames } from './testdata/fixtures.ts';

const REV = 'main@sha1:3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39';
const QUOTA =
  'pods "web-5bb5669766-x7k2p" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=0, limited: pods=0';
const UNSCHEDULABLE =
  "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";

/** fixture, status, reason, message. Comments mark where we answer differently from kstatus, and why. */
const GOLDEN: [string, HealthStatus, string | undefined, string][] = [
  // generic
  ['configmap.yaml', 'Current', undefined, 'no status to wait for'],
  ['configmap-terminating.yaml', 'Terminating', 'Terminating', 'deletion waiting for finalizers: example.com/keep'],
  ['namespace-terminating.yaml', 'Terminating', 'Terminating', 'deletion in progress'],
  // Deployment
  ['deployment-available.yaml', 'Current', undefined, '3 of 3 replicas available'],
  ['deployment-progressing.yaml', 'InProgress', 'LessUpdated', '1 of 3 replicas updated'],
  ['deployment-scaling.yaml', 'InProgress', 'LessAvailable', '1 of 2 replicas available'],
  [
    'deployment-deadline-exceeded.yaml',
    'Failed',
    'ProgressDeadlineExceeded',
    '1 of 3 replicas updated; ReplicaSet "web-6f899c767b" has timed out progressing.',
  ],
  [
    'deployment-generation-behind.yaml',
    'InProgress',
    'LatestGenerationNotObserved',
    'observedGeneration 3 behind generation 4',
  ],
  // kstatus: Current would need counts; with no status at all we wait for the controller.
  ['deployment-not-observed.yaml', 'InProgress', 'NotObserved', 'waiting for the deployment controller to observe it'],
  // ReplicaSet
  ['replicaset-available.yaml', 'Current', undefined, '3 of 3 replicas available'],
  ['replicaset-quota-exceeded.yaml', 'InProgress', 'FailedCreate', QUOTA], // kstatus: "Replica Failure condition. Check Pods"
  // StatefulSet
  ['statefulset-ready.yaml', 'Current', undefined, '3 of 3 replicas ready'],
  // the updated replica's Pod is not ready yet: readiness is the first shortfall
  ['statefulset-rolling.yaml', 'InProgress', 'LessReady', '2 of 3 replicas ready'],
  [
    'statefulset-partitioned.yaml',
    'Current',
    undefined,
    'partitioned rollout complete: 1 of 3 replicas updated (partition 2)',
  ],
  // DaemonSet
  // one node in the local cluster: one pod, replaced first and then not available
  ['daemonset-ready.yaml', 'Current', undefined, '1 of 1 pods available'],
  ['daemonset-rolling.yaml', 'InProgress', 'LessAvailable', '0 of 1 pods available'],
  // Pod
  ['pod-running-ready.yaml', 'Current', undefined, 'pod is ready'],
  ['pod-running-not-ready.yaml', 'InProgress', 'ContainersNotReady', 'containers with unready status: [web]'],
  ['pod-container-creating.yaml', 'InProgress', 'PodPending', 'pending: ContainerCreating'],
  ['pod-succeeded.yaml', 'Current', undefined, 'pod completed successfully'],
  // kstatus: Current ("completed, but not successfully"); a failed bare pod never comes back.
  ['pod-failed.yaml', 'Failed', 'Error', 'Error: exit code 1'],
  [
    'pod-evicted.yaml',
    'Failed',
    'Evicted',
    'Evicted: The node was low on resource: memory. Threshold quantity: 100Mi, available: 91336Ki. Container web was using 1823412Ki, request is 256Mi, has larger consumption of memory.',
  ],
  // kstatus: InProgress until the timeout for every waiting reason but CrashLoopBackOff.
  ['pod-image-pull-backoff.yaml', 'Failed', 'ImagePullBackOff', 'ImagePullBackOff: Back-off pulling image "nope:1"'],
  [
    'pod-err-image-pull.yaml',
    'Failed',
    'ErrImagePull',
    'ErrImagePull: failed to pull and unpack image "nope:1": failed to resolve reference "nope:1": not found',
  ],
  [
    'pod-invalid-image-name.yaml',
    'Failed',
    'InvalidImageName',
    'InvalidImageName: Failed to apply default image tag "Web:Latest": couldn\'t parse image name "Web:Latest": invalid reference format: repository name (library/Web) must be lowercase',
  ],
  [
    'pod-create-container-config-error.yaml',
    'Failed',
    'CreateContainerConfigError',
    'CreateContainerConfigError: secret "web-db" not found',
  ],
  [
    'pod-sidecar-image-pull-backoff.yaml',
    'Failed',
    'ImagePullBackOff',
    'ImagePullBackOff (container log-shipper): Back-off pulling image "fluent-bit:9.9.9"',
  ],
  [
    'pod-crash-loop.yaml',
    'Failed',
    'CrashLoopBackOff',
    'CrashLoopBackOff: restarted 10 times, last exit code 1 (Error)',
  ],
  // kstatus: Failed at the first CrashLoopBackOff; we allow a start-up race to settle.
  [
    'pod-crash-loop-first-restart.yaml',
    'InProgress',
    'CrashLoopBackOff',
    'CrashLoopBackOff: restarted 1 time, last exit code 1 (Error)',
  ],
  [
    'pod-init-crash-loop.yaml',
    'Failed',
    'CrashLoopBackOff',
    'CrashLoopBackOff (init container migrate): restarted 3 times, last exit code 1 (Error)',
  ],
  ['pod-oom-restarted.yaml', 'InProgress', 'OOMKilled', 'OOMKilled: restarted 2 times, last exit code 137'],
  // kstatus: InProgress for 15s, then Failed, by the wall clock; we stay pure and never fail on it.
  ['pod-unschedulable.yaml', 'InProgress', 'Unschedulable', `Unschedulable: ${UNSCHEDULABLE}`],
  // Job
  ['job-running.yaml', 'InProgress', 'JobRunning', 'running: 0 of 1 succeeded, 1 active, 0 failed'], // kstatus: Current
  ['job-complete.yaml', 'Current', undefined, 'completed: 1 of 1 succeeded'],
  [
    'job-failed.yaml',
    'Failed',
    'BackoffLimitExceeded',
    'BackoffLimitExceeded: Job has reached the specified backoff limit',
  ],
  ['job-suspended.yaml', 'Current', undefined, 'suspended'],
  // PersistentVolumeClaim, Service, CustomResourceDefinition, PodDisruptionBudget
  ['pvc-pending.yaml', 'InProgress', 'NotBound', 'pending: not bound to a volume yet'],
  ['pvc-bound.yaml', 'Current', undefined, 'bound to pvc-7f703670-091b-4707-93b1-6e8cc3441a52'],
  ['service-cluster-ip.yaml', 'Current', undefined, 'service is ready'],
  // kstatus: Current as soon as spec.clusterIP is set, i.e. at once.
  [
    'service-load-balancer-pending.yaml',
    'InProgress',
    'NoLoadBalancerIngress',
    'waiting for the load balancer to get an address',
  ],
  ['service-load-balancer-ready.yaml', 'Current', undefined, 'load balancer at 203.0.113.10'],
  ['crd-established.yaml', 'Current', undefined, 'established'],
  ['crd-installing.yaml', 'InProgress', 'Installing', 'waiting for the API server to establish the CRD'],
  ['crd-names-conflict.yaml', 'Failed', 'PluralConflict', 'PluralConflict: "widgets" is already in use'],
  ['pdb.yaml', 'Current', undefined, '1 disruption allowed (3 pods healthy, 2 required)'],
  // PackageSync itself, through the generic rules: what kpt, Flux and cli-utils will see.
  // kstatus: Current, before the controller has even looked at it.
  ['packagesync-new.yaml', 'InProgress', 'NotObserved', 'waiting for the packagesync controller to observe it'],
  ['packagesync-ready.yaml', 'Current', undefined, `Applied revision ${REV}`],
  ['packagesync-reconciling.yaml', 'InProgress', 'Progressing', `Waiting for 2 objects to become healthy at ${REV}`],
  ['packagesync-stalled.yaml', 'Failed', 'PathNotFound', `path "apps/web" not found at ${REV}`],
  // kstatus: Current (it ignores Ready); a controller that is retrying is not done.
  [
    'packagesync-retrying.yaml',
    'InProgress',
    'FetchFailed',
    'fetching https://git.example.com/platform/packages.git: connection refused; retrying in 30s',
  ],
  [
    'packagesync-generation-behind.yaml',
    'InProgress',
    'LatestGenerationNotObserved',
    'observedGeneration 5 behind generation 6',
  ],
];

describe('computeHealth on golden objects', () => {
  it.each(GOLDEN)('%s → %s', (file, status, reason, message) => {
    expect(computeHealth(fixture(file))).toEqual({ status, ...(reason ? { reason } : {}), message });
  });

  it('covers every single-object fixture', () => {
    const covered = new Set(GOLDEN.map(([file]) => file));
    const single = fixtureNames().filter((name) => !name.startsWith('explain-'));
    expect(single.filter((name) => !covered.has(name))).toEqual([]);
  });
});
