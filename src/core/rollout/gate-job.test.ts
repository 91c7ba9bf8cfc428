import { describe, expect, it } from 'vitest';
import { gateJobName, gateJobObject, jobVerdict, type GateJobKey } from './gate-job.ts';

const key: GateJobKey = {
  set: 'web',
  wave: 'canary',
  gate: 'smoke',
  revision: `main@sha1:${'a'.repeat(40)}`,
  attempt: 0,
};

describe('a Job gate’s Job', () => {
  it('has one name per set, wave, gate, revision and attempt, the same on every call (a restart finds it)', () => {
    expect(gateJobName(key)).toBe(gateJobName({ ...key }));
    expect(gateJobName(key)).toMatch(/^web-canary-smoke-[0-9a-f]{10}$/);
    const others = [
      { ...key, revision: `main@sha1:${'b'.repeat(40)}` },
      { ...key, attempt: 1 },
      { ...key, wave: 'rest' },
      { ...key, gate: 'other' },
    ].map(gateJobName);
    expect(new Set([gateJobName(key), ...others]).size).toBe(5);
  });

  it('stays within 63 characters and ends clean with long names', () => {
    const name = gateJobName({ ...key, set: 's'.repeat(200), wave: 'w'.repeat(60), gate: 'g'.repeat(60) });
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
  });

  it('carries the set’s labels and a plain owner reference (no rights on the set needed to create it)', () => {
    const job = gateJobObject({ name: 'web', namespace: 'team-a', uid: 'u1' }, key, {
      metadata: { labels: { team: 'a' } },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } } },
      timeout: '10m',
    });
    expect(job.metadata).toMatchObject({
      name: gateJobName(key),
      namespace: 'team-a',
      labels: { team: 'a', 'packagesync.io/set': 'web', 'packagesync.io/gate': 'smoke' },
      ownerReferences: [{ apiVersion: 'packagesync.io/v1alpha1', kind: 'PackageSyncSet', name: 'web', uid: 'u1' }],
    });
    expect(job.spec).toEqual({
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } },
    });
  });

  it.each([
    ['no status yet', undefined, { state: 'running' }],
    ['complete', { conditions: [{ type: 'Complete', status: 'True' }] }, { state: 'succeeded' }],
    [
      'failed: its reason',
      {
        conditions: [
          { type: 'FailureTarget', status: 'True' },
          { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' },
        ],
      },
      { state: 'failed', reason: 'BackoffLimitExceeded' },
    ],
    [
      'a condition that is False counts for nothing',
      { conditions: [{ type: 'Failed', status: 'False' }] },
      { state: 'running' },
    ],
  ])('jobVerdict: %s', (_what, status, want) => {
    expect(jobVerdict(status)).toEqual(want);
  });
});
