import { describe, expect, it } from 'vitest';
import type { SetStatus } from '../../api/packagesyncset.ts';
import { setWhyLines } from './why.ts';

const REV = `main@sha1:${'a'.repeat(40)}`;

describe('setWhyLines: what a rollout waits on, from its status', () => {
  it.each<[string, SetStatus | undefined, string[]]>([
    ['not reconciled', undefined, ['PackageSyncSet team-a/web: not reconciled yet']],
    [
      'waiting for a person: the annotation to set',
      {
        phase: 'Gating',
        revision: REV,
        blockedBy: {
          wave: 'canary',
          gate: 'owner',
          reason: 'WaitingForApproval',
          message: `wave canary waits for approval: annotate packagesync.io/approve=canary@${'a'.repeat(40)}`,
          since: '2026-11-28T00:00:00.000Z',
        },
      },
      [
        `PackageSyncSet team-a/web: Gating on ${REV}`,
        `  blocked by gate owner of wave canary since 2026-11-28T00:00:00.000Z: WaitingForApproval: wave canary waits for approval: annotate packagesync.io/approve=canary@${'a'.repeat(40)}`,
      ],
    ],
    [
      'held: the gate, the hint to resume, the failed targets first',
      {
        phase: 'Holding',
        revision: REV,
        message:
          'wave two: 1 of 2 targets failed; holding for a person; to go on with it: annotate packagesync.io/resume=two@x',
        blockedBy: {
          wave: 'two',
          gate: 'health',
          reason: 'FailureBudgetExceeded',
          message: 'wave two: 1 of 2 targets failed',
          since: 't',
        },
        targets: [
          { name: 'b', cluster: 'b', child: 'web-b', wave: 'two', health: 'Progressing' },
          {
            name: 'c',
            cluster: 'c',
            child: 'web-c',
            wave: 'two',
            health: 'Failed',
            reason: 'HealthCheckFailed',
            message: 'Deployment/web: 0 of 1 ready',
          },
          { name: 'a', cluster: 'a', child: 'web-a', wave: 'one', health: 'Failed' },
          { name: 'd', cluster: 'd', child: 'web-d', wave: 'two', health: 'Healthy' },
        ],
      },
      [
        `PackageSyncSet team-a/web: Holding on ${REV}`,
        '  blocked by health of wave two since t: FailureBudgetExceeded: wave two: 1 of 2 targets failed',
        '  wave two: 1 of 2 targets failed; holding for a person; to go on with it: annotate packagesync.io/resume=two@x',
        '    target c (PackageSync web-c): Failed HealthCheckFailed: Deployment/web: 0 of 1 ready',
        '    target b (PackageSync web-b): Progressing',
      ],
    ],
    [
      'succeeded',
      { phase: 'Succeeded', revision: REV, message: 'went through' },
      [`PackageSyncSet team-a/web: Succeeded on ${REV}`],
    ],
  ])('%s', (_what, status, want) => {
    expect(setWhyLines('team-a/web', status)).toEqual(want);
  });
});
