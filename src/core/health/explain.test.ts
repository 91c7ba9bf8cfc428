import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { describeRef, refOf } from '../object.ts';
import { explainWorkload } from './index.ts';
import type { Health } from './index.ts';
import { fixture, fixtureDocs, fixtureNames } from './testdata/fixtures.ts';

const UNSCHEDULABLE =
  "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling";
const QUOTA =
  'pods "web-5bb5669766-x7k2p" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=0, limited: pods=0';

/**
 * Each scene: the workload first, then the ReplicaSets and Pods an adapter would list beside it. Messages
 * are given without the workload's name, which explainWorkload puts first (as describeRef spells it).
 */
const SCENES: [string, Health][] = [
  [
    'explain-deployment-image-pull.yaml',
    {
      status: 'Failed',
      reason: 'ImagePullBackOff',
      message: '0 of 2 replicas available; Pod web-746df4b745-abcde: ImagePullBackOff: Back-off pulling image "nope:1"',
    },
  ],
  // The old ReplicaSet's pods still fail, but they are what the fix replaces: no blame, no Failed.
  [
    'explain-deployment-fix-rolling.yaml',
    { status: 'InProgress', reason: 'LessUpdated', message: '1 of 2 replicas updated' },
  ],
  [
    'explain-deployment-crash-loop-deadline.yaml',
    {
      status: 'Failed',
      reason: 'ProgressDeadlineExceeded',
      message:
        '1 of 3 replicas updated; ReplicaSet "web-f8df77975" has timed out progressing; Pod web-f8df77975-abcde: CrashLoopBackOff: restarted 10 times, last exit code 1 (Error)',
    },
  ],
  [
    'explain-deployment-quota.yaml',
    {
      status: 'InProgress',
      reason: 'FailedCreate',
      message: `0 of 2 replicas updated; ReplicaSet web-5bb5669766: ${QUOTA}`,
    },
  ],
  [
    'explain-statefulset-unschedulable.yaml',
    {
      status: 'InProgress',
      reason: 'Unschedulable',
      message: `1 of 3 replicas created; Pod db-0: Unschedulable: ${UNSCHEDULABLE}`,
    },
  ],
  [
    'explain-job-config-error.yaml',
    {
      status: 'Failed',
      reason: 'CreateContainerConfigError',
      message:
        'running: 0 of 1 succeeded, 1 active, 0 failed; Pod migrate-xk2vq: CreateContainerConfigError: secret "migrate-db" not found',
    },
  ],
  // A failed attempt is named, but the Job's backoffLimit, not us, decides when retrying stops.
  [
    'explain-job-retrying.yaml',
    {
      status: 'InProgress',
      reason: 'Error',
      message: 'running: 0 of 1 succeeded, 1 active, 1 failed; Pod migrate-abcde: Error: exit code 1',
    },
  ],
  // Named (it is why the DaemonSet is not available) but not fatal: the pod is of an older template.
  [
    'explain-daemonset-old-pods.yaml',
    {
      status: 'InProgress',
      reason: 'ImagePullBackOff',
      message: '1 of 2 pods updated; Pod agent-x7k2p: ImagePullBackOff: Back-off pulling image "agent:9.9.9"',
    },
  ],
];

const named = (workload: KubeObject, message: string) => `${describeRef(refOf(workload))}: ${message}`;

function scene(name: string): [KubeObject, KubeObject[]] {
  const [workload, ...children] = fixtureDocs(name);
  if (!workload) throw new Error(`${name} is empty`);
  return [workload, children];
}

describe('explainWorkload on golden scenes', () => {
  it.each(SCENES)('%s', (name, expected) => {
    const [workload, children] = scene(name);
    expect(explainWorkload(workload, children)).toEqual({ ...expected, message: named(workload, expected.message) });
  });

  it('covers every scene fixture', () => {
    const covered = new Set(SCENES.map(([name]) => name));
    expect(fixtureNames().filter((n) => n.startsWith('explain-') && !covered.has(n))).toEqual([]);
  });
});

describe('explainWorkload', () => {
  it('names the workload even when there is nothing to explain', () => {
    const deployment = fixture('deployment-available.yaml');
    expect(explainWorkload(deployment, [])).toEqual({
      status: 'Current',
      message: named(deployment, '3 of 3 replicas available'),
    });
  });

  it('does not blame pods while the controller has not seen the new spec', () => {
    const [deployment, children] = scene('explain-deployment-image-pull.yaml');
    const applied = structuredClone(deployment);
    applied.metadata.generation = 2; // the fix was just applied; status still describes generation 1
    expect(explainWorkload(applied, children)).toEqual({
      status: 'InProgress',
      reason: 'LatestGenerationNotObserved',
      message: named(applied, 'observedGeneration 1 behind generation 2'),
    });
  });

  it('ignores pods of a deleted and recreated owner of the same name', () => {
    const [deployment, children] = scene('explain-deployment-image-pull.yaml');
    const recreated = structuredClone(deployment);
    recreated.metadata.uid = '00000000-0000-4000-9000-000000000000';
    expect(explainWorkload(recreated, children).message).toBe(named(recreated, '0 of 2 replicas available'));
  });

  it('skips pods that are already terminating', () => {
    const [deployment, children] = scene('explain-deployment-image-pull.yaml');
    const terminating = children.map((c) =>
      c.kind === 'Pod' ? { ...c, metadata: { ...c.metadata, deletionTimestamp: '2025-03-10T09:20:00Z' } } : c,
    );
    expect(explainWorkload(deployment, terminating).status).toBe('InProgress');
  });

  it('names a crash loop below the threshold without failing the workload', () => {
    const [deployment, children] = scene('explain-deployment-crash-loop-deadline.yaml');
    const young = structuredClone(deployment);
    young.status = { ...(young.status as object), conditions: [] };
    const pods = structuredClone(children);
    const crashing = pods.find((c) => c.metadata.name === 'web-f8df77975-abcde') as KubeObject;
    (crashing.status as { containerStatuses: { restartCount: number }[] }).containerStatuses[0]!.restartCount = 1;
    expect(explainWorkload(young, pods)).toEqual({
      status: 'InProgress',
      reason: 'CrashLoopBackOff',
      message: named(
        young,
        '1 of 3 replicas updated; Pod web-f8df77975-abcde: CrashLoopBackOff: restarted 1 time, last exit code 1 (Error)',
      ),
    });
  });

  it('prefers a fatal cause over an earlier harmless one', () => {
    const [job, children] = scene('explain-job-retrying.yaml');
    const config = structuredClone(scene('explain-job-config-error.yaml')[1][0]!);
    // the same Job's pod (the two scenes were made from different Jobs)
    config.metadata.ownerReferences = [{ ...config.metadata.ownerReferences![0]!, uid: job.metadata.uid! }];
    const health = explainWorkload(job, [...children, config]);
    expect(health.status).toBe('Failed');
    expect(health.reason).toBe('CreateContainerConfigError');
  });

  it('leaves kinds without children alone', () => {
    const service = fixture('service-load-balancer-pending.yaml');
    expect(explainWorkload(service, [])).toEqual({
      status: 'InProgress',
      reason: 'NoLoadBalancerIngress',
      message: named(service, 'waiting for the load balancer to get an address'),
    });
  });
});
