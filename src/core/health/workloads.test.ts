import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { computeHealth } from './index.ts';
import { fixture } from './testdata/fixtures.ts';

/** A copy of a golden object with some of its spec and status replaced. */
function variant(name: string, spec: Record<string, unknown>, status: Record<string, unknown> = {}): KubeObject {
  const obj = structuredClone(fixture(name));
  obj.spec = { ...(obj.spec as object), ...spec };
  obj.status = { ...(obj.status as object), ...status };
  return obj;
}

describe('Deployment', () => {
  it('says a rollout is paused, so a stalled wait is not mistaken for a slow one', () => {
    const paused = variant('deployment-progressing.yaml', { paused: true });
    expect(computeHealth(paused)).toEqual({
      status: 'InProgress',
      reason: 'LessUpdated',
      message: 'rollout paused: 1 of 3 replicas updated',
    });
  });

  it('is Current at zero replicas', () => {
    const zero = variant(
      'deployment-available.yaml',
      { replicas: 0 },
      { replicas: 0, updatedReplicas: 0, readyReplicas: 0, availableReplicas: 0 },
    );
    expect(computeHealth(zero)).toEqual({ status: 'Current', message: '0 of 0 replicas available' });
  });

  it('counts extra replicas still terminating after a scale-down', () => {
    const shrinking = variant('deployment-available.yaml', { replicas: 2 }, { replicas: 3, updatedReplicas: 3 });
    expect(computeHealth(shrinking)).toEqual({
      status: 'InProgress',
      reason: 'ExtraPods',
      message: '1 extra replica pending termination',
    });
  });

  it('waits for the Progressing condition to catch up with complete counts', () => {
    const counted = variant('deployment-progressing.yaml', {}, { replicas: 3, updatedReplicas: 3, readyReplicas: 3 });
    expect(computeHealth(counted)).toEqual({
      status: 'InProgress',
      reason: 'ReplicaSetUpdated',
      message: 'ReplicaSet "web-6f899c767b" is progressing.',
    });
  });

  it('does not require Progressing when there is no progress deadline', () => {
    const noDeadline = variant('deployment-available.yaml', { progressDeadlineSeconds: 2147483647 });
    (noDeadline.status as { conditions: unknown[] }).conditions.splice(1, 1); // the controller sets no Progressing
    expect(computeHealth(noDeadline).status).toBe('Current');
  });

  it('applies to the pre-1.16 extensions group too', () => {
    const legacy = { ...fixture('deployment-deadline-exceeded.yaml'), apiVersion: 'extensions/v1beta1' };
    expect(computeHealth(legacy).status).toBe('Failed');
  });
});

describe('StatefulSet', () => {
  it('with OnDelete, still waits for ready replicas but not for revisions', () => {
    const onDelete = variant(
      'statefulset-rolling.yaml',
      { updateStrategy: { type: 'OnDelete' } },
      { readyReplicas: 3, availableReplicas: 3 },
    );
    expect(computeHealth(onDelete)).toEqual({
      status: 'Current',
      message: '3 of 3 replicas ready (OnDelete: updates wait for pods to be deleted)',
    });
    const notReady = variant(
      'statefulset-rolling.yaml',
      { updateStrategy: { type: 'OnDelete' } },
      { readyReplicas: 1 },
    );
    expect(computeHealth(notReady)).toEqual({
      status: 'InProgress',
      reason: 'LessReady',
      message: '1 of 3 replicas ready',
    });
  });

  it('waits for currentRevision once all replicas are updated', () => {
    const caughtUp = variant(
      'statefulset-rolling.yaml',
      {},
      { updatedReplicas: 3, currentReplicas: 3, readyReplicas: 3, availableReplicas: 3 },
    );
    expect(computeHealth(caughtUp)).toEqual({
      status: 'InProgress',
      reason: 'RevisionMismatch',
      message: 'waiting for currentRevision db-77d9794685 to reach db-6dcbb7b8f',
    });
  });

  it('rolls a partition out down to the partition ordinal', () => {
    const partial = variant('statefulset-partitioned.yaml', {}, { updatedReplicas: 0 });
    expect(computeHealth(partial)).toEqual({
      status: 'InProgress',
      reason: 'PartitionRollout',
      message: '0 of 1 replicas updated (partition 2)',
    });
  });
});

describe('DaemonSet', () => {
  it('with OnDelete, does not wait for pods to be updated', () => {
    const onDelete = variant(
      'daemonset-rolling.yaml',
      { updateStrategy: { type: 'OnDelete' } },
      { numberAvailable: 1, numberReady: 1, updatedNumberScheduled: 0 },
    );
    expect(computeHealth(onDelete)).toEqual({ status: 'Current', message: '1 of 1 pods available' });
  });

  it('waits until the controller has counted the nodes', () => {
    const counting = structuredClone(fixture('daemonset-ready.yaml'));
    counting.status = { observedGeneration: 2 };
    expect(computeHealth(counting).reason).toBe('NoDesiredNumber');
  });
});
