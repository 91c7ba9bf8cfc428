import { describe, expect, it } from 'vitest';
import type { ObjectRef } from '../object.ts';
import { describeRef } from '../object.ts';
import { describeUnhealthy, isHealthy, isTerminal, notFoundHealth, summarizeHealth } from './index.ts';
import type { Health, ObjectHealth } from './index.ts';

const deployment = (name: string): ObjectRef => ({ group: 'apps', kind: 'Deployment', namespace: 'team-a', name });
const job: ObjectRef = { group: 'batch', kind: 'Job', namespace: 'team-a', name: 'migrate' };
/** Names as describeRef spells them (built-in groups unnamed: `Deployment/team-a/web`). */
const web = describeRef(deployment('web'));
const ok: Health = { status: 'Current', message: '2 of 2 replicas available' };

describe('summarizeHealth', () => {
  it('counts every status and names the first object in progress', () => {
    const list: ObjectHealth[] = [
      { object: deployment('api'), health: ok },
      {
        object: deployment('web'),
        health: { status: 'InProgress', reason: 'LessReady', message: '1 of 2 replicas ready' },
      },
      {
        object: deployment('cache'),
        health: { status: 'InProgress', reason: 'LessUpdated', message: '0 of 1 replicas updated' },
      },
    ];
    expect(summarizeHealth(list)).toEqual({
      status: 'InProgress',
      total: 3,
      counts: { Current: 1, InProgress: 2, Failed: 0, Terminating: 0, NotFound: 0, Unknown: 0 },
      first: list[1],
      message: `2 objects in progress: ${web} (1 of 2 replicas ready)`,
    });
  });

  it('leads with the most severe status and mentions the rest', () => {
    const failed: Health = {
      status: 'Failed',
      reason: 'BackoffLimitExceeded',
      message: 'BackoffLimitExceeded: Job has reached the specified backoff limit.',
    };
    const summary = summarizeHealth([
      {
        object: deployment('web'),
        health: { status: 'InProgress', reason: 'LessReady', message: '1 of 2 replicas ready' },
      },
      {
        object: deployment('old'),
        health: { status: 'Terminating', reason: 'Terminating', message: 'deletion in progress' },
      },
      { object: job, health: failed },
    ]);
    expect(summary.status).toBe('Failed');
    expect(summary.message).toBe(
      `1 object failed: ${describeRef(job)} (BackoffLimitExceeded: Job has reached the specified backoff limit); also 1 terminating, 1 in progress`,
    );
  });

  it('does not repeat a name explainWorkload already put in the message', () => {
    const health: Health = {
      status: 'Failed',
      reason: 'ImagePullBackOff',
      message: `${web}: 0 of 2 replicas available; Pod web-7d9f-abcde: ImagePullBackOff: Back-off pulling image "nope:1"`,
    };
    expect(summarizeHealth([{ object: deployment('web'), health }]).message).toBe(
      `1 object failed: ${web} (0 of 2 replicas available; Pod web-7d9f-abcde: ImagePullBackOff: Back-off pulling image "nope:1")`,
    );
  });

  it('reports objects that went missing', () => {
    const summary = summarizeHealth([{ object: deployment('web'), health: notFoundHealth() }]);
    expect(summary.message).toBe(`1 object not found: ${web} (object not found)`);
  });

  it('says all is well, or that there is nothing', () => {
    expect(
      summarizeHealth([
        { object: deployment('web'), health: ok },
        { object: job, health: ok },
      ]),
    ).toMatchObject({
      status: 'Current',
      message: '2 objects current',
    });
    expect(summarizeHealth([])).toMatchObject({ status: 'Current', total: 0, message: 'no objects' });
    expect(summarizeHealth([]).first).toBeUndefined();
  });
});

describe('isHealthy and isTerminal', () => {
  it.each([
    ['Current', true, false],
    ['InProgress', false, false],
    ['Failed', false, true],
    ['Terminating', false, false],
    ['NotFound', false, false],
    ['Unknown', false, false],
  ] as const)('%s: healthy %s, terminal %s', (status, healthy, terminal) => {
    const health: Health = { status, message: '' };
    expect(isHealthy(health)).toBe(healthy);
    expect(isTerminal(health)).toBe(terminal);
  });
});

describe('describeUnhealthy', () => {
  it('names every object that is not Current, most severe first, input order within a status', () => {
    const list: ObjectHealth[] = [
      { object: deployment('api'), health: ok },
      {
        object: deployment('web'),
        health: { status: 'InProgress', reason: 'LessReady', message: '1 of 2 replicas ready.' },
      },
      { object: job, health: { status: 'Failed', reason: 'BackoffLimitExceeded', message: 'BackoffLimitExceeded' } },
      { object: deployment('cache'), health: notFoundHealth() },
    ];
    expect(describeUnhealthy(list)).toBe(
      `${describeRef(job)} (BackoffLimitExceeded); ${describeRef(deployment('cache'))} (object not found); ${web} (1 of 2 replicas ready)`,
    );
    expect(describeUnhealthy([list[0]!])).toBe('');
  });

  it('cuts one long message short so the others still fit', () => {
    const long: Health = { status: 'InProgress', reason: 'Unschedulable', message: 'x'.repeat(1000) };
    const text = describeUnhealthy([{ object: deployment('web'), health: long }]);
    expect(text.length).toBe(300);
    expect(text.startsWith(`${web} (xxx`)).toBe(true);
    expect(text.endsWith('…)')).toBe(true);
  });
});
