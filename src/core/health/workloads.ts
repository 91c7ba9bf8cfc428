import type { KubeObject } from '../object.ts';
import { condition, field, int, optionalInt, str } from './fields.ts';
import { awaitController } from './generic.ts';
import type { Health } from './health.ts';
import { current, failed, inProgress, plural } from './health.ts';

/**
 * Rules for the replica controllers: Deployment, StatefulSet, DaemonSet, ReplicaSet. Each compares what the
 * spec asks for with what the controller reports, and names the first shortfall as "N of M replicas …".
 */

/** The API server stores "no deadline" as MaxInt32 (k8s deployment_util.go), and then sets no Progressing. */
const NO_PROGRESS_DEADLINE = 2147483647;

export function deploymentHealth(obj: KubeObject): Health {
  const pending = awaitController(obj, 'deployment');
  if (pending) return pending;

  const shortfall = deploymentShortfall(obj);
  const progressing = condition(obj, 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    const timedOut = progressing.message ?? 'progress deadline exceeded';
    return failed('ProgressDeadlineExceeded', shortfall ? `${shortfall.message}; ${timedOut}` : timedOut);
  }
  const paused = field(obj, 'spec', 'paused') === true;
  // A paused rollout waits for a person, not for time; say so, or the wait looks like a slow rollout.
  if (shortfall) return paused ? { ...shortfall, message: `rollout paused: ${shortfall.message}` } : shortfall;

  // Counts can be complete a moment before the controller flips its conditions; trust the conditions last.
  const deadline = optionalInt(obj, ['spec', 'progressDeadlineSeconds']);
  if (deadline !== undefined && deadline !== NO_PROGRESS_DEADLINE) {
    if (progressing?.status !== 'True' || progressing.reason !== 'NewReplicaSetAvailable') {
      const why = paused ? 'rollout paused' : (progressing?.message ?? 'waiting for the new ReplicaSet');
      return inProgress(progressing?.reason ?? 'RolloutInProgress', why);
    }
  }
  const available = condition(obj, 'Available');
  if (available?.status !== 'True') {
    return inProgress(available?.reason ?? 'DeploymentNotAvailable', available?.message ?? 'Deployment not available');
  }
  const spec = int(obj, ['spec', 'replicas'], 1);
  return current(`${int(obj, ['status', 'availableReplicas'], 0)} of ${spec} replicas available`);
}

function deploymentShortfall(obj: KubeObject): Health | undefined {
  const spec = int(obj, ['spec', 'replicas'], 1); // the controller's default
  const replicas = int(obj, ['status', 'replicas'], 0);
  const updated = int(obj, ['status', 'updatedReplicas'], 0);
  const ready = int(obj, ['status', 'readyReplicas'], 0);
  const available = int(obj, ['status', 'availableReplicas'], 0);
  if (updated < spec) return inProgress('LessUpdated', `${updated} of ${spec} replicas updated`);
  if (replicas > spec) return extraReplicas(replicas - spec);
  if (available < spec) return inProgress('LessAvailable', `${available} of ${spec} replicas available`);
  if (ready < spec) return inProgress('LessReady', `${ready} of ${spec} replicas ready`);
  return undefined;
}

function extraReplicas(count: number): Health {
  return inProgress('ExtraPods', `${plural(count, 'extra replica')} pending termination`);
}

export function statefulSetHealth(obj: KubeObject): Health {
  const pending = awaitController(obj, 'statefulset');
  if (pending) return pending;

  const spec = int(obj, ['spec', 'replicas'], 1);
  const replicas = int(obj, ['status', 'replicas'], 0);
  const ready = int(obj, ['status', 'readyReplicas'], 0);
  const updated = int(obj, ['status', 'updatedReplicas'], 0);
  // availableReplicas exists since 1.22 (minReadySeconds); older servers do not report it.
  const available = optionalInt(obj, ['status', 'availableReplicas']);
  if (replicas < spec) return inProgress('LessReplicas', `${replicas} of ${spec} replicas created`);
  if (ready < spec) return inProgress('LessReady', `${ready} of ${spec} replicas ready`);
  if (available !== undefined && available < spec) {
    return inProgress('LessAvailable', `${available} of ${spec} replicas available`);
  }
  if (replicas > spec) return extraReplicas(replicas - spec);

  // kstatus calls every OnDelete StatefulSet Current, even one whose pods never start; we still require the
  // replicas to be ready and skip only the revision checks, which wait for a person to delete pods.
  if (str(obj, ['spec', 'updateStrategy', 'type']) === 'OnDelete') {
    return current(`${ready} of ${spec} replicas ready (OnDelete: updates wait for pods to be deleted)`);
  }

  // A partition holds back the ordinals below it on purpose: done when those at or above it are updated.
  const partition = int(obj, ['spec', 'updateStrategy', 'rollingUpdate', 'partition'], 0);
  if (partition > 0) {
    const target = Math.max(0, spec - partition);
    if (updated < target) {
      return inProgress('PartitionRollout', `${updated} of ${target} replicas updated (partition ${partition})`);
    }
    return current(`partitioned rollout complete: ${updated} of ${spec} replicas updated (partition ${partition})`);
  }
  if (updated < spec) return inProgress('LessUpdated', `${updated} of ${spec} replicas updated`);
  const currentRevision = str(obj, ['status', 'currentRevision']);
  const updateRevision = str(obj, ['status', 'updateRevision']);
  if (currentRevision !== updateRevision) {
    return inProgress('RevisionMismatch', `waiting for currentRevision ${currentRevision} to reach ${updateRevision}`);
  }
  return current(`${ready} of ${spec} replicas ready`);
}

export function daemonSetHealth(obj: KubeObject): Health {
  const pending = awaitController(obj, 'daemonset');
  if (pending) return pending;

  const desired = optionalInt(obj, ['status', 'desiredNumberScheduled']);
  if (desired === undefined)
    return inProgress('NoDesiredNumber', 'waiting for the daemonset controller to count nodes');
  const scheduled = int(obj, ['status', 'currentNumberScheduled'], 0);
  const updated = int(obj, ['status', 'updatedNumberScheduled'], 0);
  const available = int(obj, ['status', 'numberAvailable'], 0);
  const ready = int(obj, ['status', 'numberReady'], 0);
  if (scheduled < desired) return inProgress('LessScheduled', `${scheduled} of ${desired} pods scheduled`);
  // OnDelete: old pods stay until a person deletes them, so "updated" cannot be waited for.
  const onDelete = str(obj, ['spec', 'updateStrategy', 'type']) === 'OnDelete';
  if (!onDelete && updated < desired) return inProgress('LessUpdated', `${updated} of ${desired} pods updated`);
  if (available < desired) return inProgress('LessAvailable', `${available} of ${desired} pods available`);
  if (ready < desired) return inProgress('LessReady', `${ready} of ${desired} pods ready`);
  return current(`${available} of ${desired} pods available`);
}

export function replicaSetHealth(obj: KubeObject): Health {
  const pending = awaitController(obj, 'replicaset');
  if (pending) return pending;

  // ReplicaFailure carries the API error that stopped pod creation (quota, admission): the best cause there is.
  const failure = condition(obj, 'ReplicaFailure');
  if (failure?.status === 'True') {
    return inProgress(failure.reason ?? 'ReplicaFailure', failure.message ?? 'pods cannot be created');
  }
  const spec = int(obj, ['spec', 'replicas'], 1);
  const replicas = int(obj, ['status', 'replicas'], 0);
  const labeled = int(obj, ['status', 'fullyLabeledReplicas'], 0);
  const ready = int(obj, ['status', 'readyReplicas'], 0);
  const available = int(obj, ['status', 'availableReplicas'], 0);
  if (labeled < spec) return inProgress('LessLabelled', `${labeled} of ${spec} replicas labelled`);
  if (available < spec) return inProgress('LessAvailable', `${available} of ${spec} replicas available`);
  if (ready < spec) return inProgress('LessReady', `${ready} of ${spec} replicas ready`);
  if (replicas > spec) return extraReplicas(replicas - spec);
  return current(`${available} of ${spec} replicas available`);
}
