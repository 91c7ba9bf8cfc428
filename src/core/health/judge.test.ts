import { describe, expect, it } from 'vitest';
import { available, deployment, starting } from '../../../test/support/workloads.ts';
import type { KubeObject } from '../object.ts';
import { freshestCopy, judgeHealth, workloadsToExplain } from './judge.ts';

describe('judgeHealth', () => {
  const ref = (name: string) => ({ group: 'apps', kind: 'Deployment', namespace: 'team-a', name });
  it('a missing copy is NotFound; a Current one is judged alone; a slow workload is explained by its Pods', () => {
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-1', namespace: 'team-a', labels: { app: 'web' } },
      status: {
        phase: 'Pending',
        containerStatuses: [
          { name: 'c', ready: false, state: { waiting: { reason: 'ImagePullBackOff', message: 'no such image' } } },
        ],
      },
    };
    const list = judgeHealth(
      [ref('gone'), ref('api'), ref('web')],
      [undefined, deployment('api', available), deployment('web', starting)],
      [pod],
    );
    expect(list.map((o) => o.health.status)).toEqual(['NotFound', 'Current', 'InProgress']);
    expect(list[0]!.health).toMatchObject({ reason: 'NotFound', message: 'object not found' });
  });

  it('asks for children only for workloads that are not Current', () => {
    const web = deployment('web', starting);
    expect(workloadsToExplain([undefined, deployment('api', available), web])).toEqual([web]);
  });
});

describe('freshestCopy', () => {
  const at = (o: KubeObject, created: string): KubeObject => ({
    ...o,
    metadata: { ...o.metadata, creationTimestamp: created },
  });
  const gen1 = deployment('web', {}, 1);
  const gen2 = deployment('web', {}, 2);
  it.each([
    ['the read copy when it is as new', gen2, gen2, true, gen2],
    ['the known copy when the read one is of an older generation', gen1, gen2, false, gen2],
    ['the read copy when it is of a newer generation', gen2, gen1, false, gen2],
    ['the known copy for a missing read, during the grace', undefined, gen1, true, gen1],
    ['nothing for a missing read after the grace (deleted)', undefined, gen1, false, undefined],
    [
      'the later creation when recreated',
      at(deployment('web', {}, 1, 'new'), '2026-01-01T00:00:05Z'),
      at(gen1, '2026-01-01T00:00:00Z'),
      false,
      at(deployment('web', {}, 1, 'new'), '2026-01-01T00:00:05Z'),
    ],
  ])('picks %s', (_what, read, known, grace, expected) => {
    expect(freshestCopy(read, known, grace)).toEqual(expected);
  });
});
