import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { CRASH_LOOP_FAILED_RESTARTS, computeHealth } from './index.ts';
import { fixture } from './testdata/fixtures.ts';
import { notReadyCause, podCause } from './pod.ts';

function withRestarts(restarts: number): KubeObject {
  const pod = structuredClone(fixture('pod-crash-loop.yaml'));
  (pod.status as { containerStatuses: { restartCount: number }[] }).containerStatuses[0]!.restartCount = restarts;
  return pod;
}

function withPhase(phase: string | undefined): KubeObject {
  const pod = structuredClone(fixture('pod-running-ready.yaml'));
  const status = pod.status as { phase?: string; message?: string };
  if (phase === undefined) delete status.phase;
  else status.phase = phase;
  return pod;
}

describe('Pod', () => {
  it(`fails a crash loop from restart ${CRASH_LOOP_FAILED_RESTARTS} on`, () => {
    expect(computeHealth(withRestarts(CRASH_LOOP_FAILED_RESTARTS - 1)).status).toBe('InProgress');
    expect(computeHealth(withRestarts(CRASH_LOOP_FAILED_RESTARTS)).status).toBe('Failed');
  });

  it('reads phase Unknown (node lost) as Unknown', () => {
    expect(computeHealth(withPhase('Unknown'))).toEqual({
      status: 'Unknown',
      reason: 'PodUnknown',
      message: 'the node stopped reporting this pod',
    });
  });

  it('waits for a phase that is not there yet, and gives up on one it does not know', () => {
    expect(computeHealth(withPhase(undefined)).status).toBe('InProgress');
    expect(computeHealth(withPhase('Hibernating'))).toEqual({
      status: 'Unknown',
      reason: 'UnknownPhase',
      message: 'unknown pod phase Hibernating',
    });
  });

  it('leaves container termination messages out: they can hold application output', () => {
    const pod = structuredClone(fixture('pod-failed.yaml'));
    const state = (pod.status as { containerStatuses: { state: { terminated: Record<string, unknown> } }[] })
      .containerStatuses[0]!.state.terminated;
    state.message = 'panic: password=hunter2';
    expect(computeHealth(pod).message).not.toContain('hunter2');
  });

  it('names a running pod that is not ready only as a last resort, never as fatal', () => {
    const running = fixture('pod-running-not-ready.yaml');
    expect(podCause(running)).toBeUndefined();
    expect(notReadyCause(running)).toEqual({
      reason: 'ContainersNotReady',
      message: 'ContainersNotReady: containers with unready status: [web]',
      fatal: false,
    });
    expect(notReadyCause(fixture('pod-running-ready.yaml'))).toBeUndefined();
    expect(notReadyCause(fixture('pod-image-pull-backoff.yaml'))).toBeUndefined(); // Pending: podCause's
  });
});
