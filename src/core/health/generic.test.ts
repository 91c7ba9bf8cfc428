import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { computeHealth } from './index.ts';

/** A custom resource of a kind no rule knows: only the generic rules apply. */
function widget(status: Record<string, unknown> | undefined, generation = 2): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', namespace: 'team-a', generation },
    ...(status ? { status } : {}),
  };
}
const c = (type: string, status: string, reason?: string, message?: string) => ({ type, status, reason, message });

describe('generic rules', () => {
  it('lets Stalled win over Reconciling whatever their order', () => {
    const stalled = c('Stalled', 'True', 'InvalidSpec', 'spec.size must be positive');
    const reconciling = c('Reconciling', 'True', 'Progressing', 'working');
    for (const conditions of [
      [stalled, reconciling],
      [reconciling, stalled],
    ]) {
      expect(computeHealth(widget({ observedGeneration: 2, conditions }))).toEqual({
        status: 'Failed',
        reason: 'InvalidSpec',
        message: 'spec.size must be positive',
      });
    }
  });

  it('checks the generation before any condition', () => {
    const health = computeHealth(widget({ observedGeneration: 1, conditions: [c('Ready', 'True')] }));
    expect(health).toEqual({
      status: 'InProgress',
      reason: 'LatestGenerationNotObserved',
      message: 'observedGeneration 1 behind generation 2',
    });
  });

  it('treats observedGeneration -1 (not yet reconciled) as behind', () => {
    expect(computeHealth(widget({ observedGeneration: -1 })).status).toBe('InProgress');
  });

  it('skips the generation check when either number is missing', () => {
    expect(computeHealth(widget({ conditions: [c('Ready', 'True')] })).status).toBe('Current');
    expect(computeHealth(widget(undefined)).status).toBe('Current');
  });

  it('ignores abnormal-true conditions that are False', () => {
    const conditions = [c('Reconciling', 'False'), c('Stalled', 'False'), c('Ready', 'True', 'Succeeded', 'all good')];
    expect(computeHealth(widget({ observedGeneration: 2, conditions }))).toEqual({
      status: 'Current',
      message: 'all good',
    });
  });

  it('reads Ready False and Unknown as InProgress, with the reason when there is one', () => {
    expect(
      computeHealth(widget({ conditions: [c('Ready', 'False', 'DependencyNotReady', 'waiting for infra')] })),
    ).toEqual({
      status: 'InProgress',
      reason: 'DependencyNotReady',
      message: 'waiting for infra',
    });
    expect(computeHealth(widget({ conditions: [c('Ready', 'Unknown')] }))).toEqual({
      status: 'InProgress',
      reason: 'NotReady',
      message: 'Ready condition is Unknown',
    });
  });

  it('ignores malformed conditions rather than guessing', () => {
    const conditions = [{ type: 'Ready' }, 'Stalled', null, { type: 'Stalled', status: 'yes' }];
    expect(computeHealth(widget({ conditions })).status).toBe('Current');
  });

  it('reports deletion first, naming the finalizers that hold it', () => {
    const obj = widget({ conditions: [c('Stalled', 'True')] });
    obj.metadata.deletionTimestamp = '2025-03-10T10:00:00Z';
    obj.metadata.finalizers = ['example.com/cleanup', 'example.com/backup'];
    expect(computeHealth(obj)).toEqual({
      status: 'Terminating',
      reason: 'Terminating',
      message: 'deletion waiting for finalizers: example.com/cleanup, example.com/backup',
    });
  });
});
