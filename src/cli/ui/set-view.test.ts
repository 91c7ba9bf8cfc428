import { describe, expect, it } from 'vitest';
import type { PackageSyncSet, SetStatus } from '../../api/packagesyncset.ts';
import { setWhyLines } from '../../core/rollout/why.ts';
import { resumeAnnotation } from '../../core/rollout/resume.ts';
import { approveRefusal, resumeRefusal, setDetail, setListPage, setRow } from './set-view.ts';

const SHA = '3f2a9c01b7de5a4c2d1e0f9a8b7c6d5e4f3a2b1c';
const REV = `main@sha1:${SHA}`;
const NOW = Date.parse('2026-11-28T04:00:00.000Z');

function set(name: string, status?: SetStatus, namespace = 'team-a'): PackageSyncSet {
  return {
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSyncSet',
    metadata: { namespace, name, generation: 2 },
    spec: {
      template: { spec: { source: { url: 'https://github.com/acme/web.git', ref: { branch: 'main' } } } },
      generators: { clusters: {} },
      rollout: {
        onFailure: 'revert',
        waves: [
          { name: 'canary', bakeTime: '0s', progressDeadline: '10m', gates: [{ name: 'owner', approval: {} }] },
          { name: 'prod', bakeTime: '10m', progressDeadline: '10m' },
        ],
      },
    },
    ...(status ? { status } : {}),
  } as unknown as PackageSyncSet;
}

const waiting: SetStatus = {
  observedGeneration: 2,
  phase: 'Gating',
  revision: REV,
  conditions: [
    {
      type: 'Reconciling',
      status: 'True',
      reason: 'WaitingForApproval',
      message: 'm',
      lastTransitionTime: '2026-11-28T03:59:00.000Z',
    },
  ],
  blockedBy: {
    wave: 'canary',
    gate: 'owner',
    reason: 'WaitingForApproval',
    message: `wave canary waits for approval: annotate packagesync.io/approve=canary@${SHA}`,
    since: '2026-11-28T03:59:00.000Z',
  },
  waves: [{ name: 'canary', phase: 'Gating', size: 1, healthy: 1, failed: 0, budget: 0 }],
  targets: [
    { name: 'east', cluster: 'east', child: 'web-east', wave: 'canary', revision: REV, health: 'Healthy' },
    { name: 'west', cluster: 'west', child: 'web-west', wave: 'prod', health: 'Pending' },
    { name: 'late', cluster: 'late', child: 'web-late', health: 'Pending' },
  ],
};

describe('the rollouts list', () => {
  it('says per set its kstatus state, phase, waves done and what it waits on', () => {
    expect(setRow(set('web', waiting))).toMatchObject({
      namespace: 'team-a',
      name: 'web',
      state: 'Reconciling',
      phase: 'Gating',
      revision: REV,
      wavesDone: 0,
      waves: 2,
      targets: 3,
      message: 'gate owner of wave canary (WaitingForApproval)',
    });
    expect(setRow(set('new')).message).toBe('the controller has not reconciled it yet');
  });

  it('filters by namespace and text, sorted by namespace and name', () => {
    const all = [set('web', waiting), set('api', undefined, 'team-b'), set('db', waiting)];
    expect(setListPage(all, {}).items.map((r) => `${r.namespace}/${r.name}`)).toEqual([
      'team-a/db',
      'team-a/web',
      'team-b/api',
    ]);
    expect(setListPage(all, { namespace: 'team-b' }).items.map((r) => r.name)).toEqual(['api']);
    expect(setListPage(all, { q: 'APPROVAL' }).items.map((r) => r.name)).toEqual(['db', 'web']);
    expect(setListPage(all, {}).namespaces).toEqual(['team-a', 'team-b']);
  });
});

describe("a set's page", () => {
  it('lists the waves in spec order with their targets, gates, and the wave a person may approve', () => {
    const d = setDetail({ set: set('web', waiting), children: new Set(['web-east']), events: [], notes: [], now: NOW });
    expect(d.waves.map((w) => [w.name, w.phase, w.targets.map((t) => [t.name, t.linked])])).toEqual([
      ['canary', 'Gating', [['east', true]]],
      ['prod', undefined, [['west', false]]],
    ]);
    expect(d.waves[0]!.gates).toEqual([{ name: 'owner', kind: 'approval', passed: false }]);
    expect(d.unplanned.map((t) => t.name)).toEqual(['late']);
    expect(d.approvable).toEqual({ wave: 'canary', revision: REV });
    expect(d.resumable).toBeUndefined();
    // the same lines `packagesync why packagesyncset/web` prints
    expect(d.why).toEqual(setWhyLines('team-a/web', waiting));
    expect(d.source).toEqual({
      url: 'https://github.com/acme/web.git',
      address: 'https://github.com/acme/web.git',
      version: 'branch main',
    });
  });

  it('says when a baking wave’s bake time ends, and nothing once it is over', () => {
    const baking: SetStatus = {
      ...waiting,
      phase: 'Baking',
      blockedBy: undefined,
      waves: [
        { name: 'canary', phase: 'Succeeded', size: 1, healthy: 1, failed: 0, budget: 0, approvedBy: 'alice' },
        {
          name: 'prod',
          phase: 'Baking',
          size: 1,
          healthy: 1,
          failed: 0,
          budget: 0,
          healthyAt: '2026-11-28T03:55:00.000Z',
        },
      ],
    };
    const at = (now: number) => setDetail({ set: set('web', baking), children: new Set(), events: [], notes: [], now });
    expect(at(NOW).waves[1]!.bakeEndsAt).toBe('2026-11-28T04:05:00.000Z');
    expect(at(NOW + 6 * 60_000).waves[1]!.bakeEndsAt).toBeUndefined();
    expect(at(NOW).waves[0]!.approvedBy).toBe('alice');
    expect(at(NOW).approvable).toBeUndefined();
  });
});

describe('what a person may decide', () => {
  const held: SetStatus = {
    ...waiting,
    phase: 'Holding',
    blockedBy: { wave: 'prod', gate: 'health', reason: 'FailureBudgetExceeded', message: 'm', since: 's' },
  };

  it('approves only the wave waiting for approval, of the revision rolled out now (by commit or whole revision)', () => {
    expect(approveRefusal(set('web', waiting), 'canary', REV)).toBeUndefined();
    expect(approveRefusal(set('web', waiting), 'canary', SHA)).toBeUndefined();
    expect(approveRefusal(set('web', waiting), 'prod', REV)).toBe(
      `PackageSyncSet team-a/web waits for approval of wave canary of ${REV}, not wave prod of ${REV}: reload`,
    );
    expect(approveRefusal(set('web', waiting), 'canary', `main@sha1:${'0'.repeat(40)}`)).toContain('reload');
    expect(approveRefusal(set('web', held), 'prod', REV)).toBe(
      'PackageSyncSet team-a/web waits for no approval now: reload',
    );
  });

  it('resumes only a held rollout, at the wave and revision it holds', () => {
    expect(resumeRefusal(set('web', held), 'prod', REV)).toBeUndefined();
    expect(resumeRefusal(set('web', held), 'canary', REV)).toContain('holds wave prod');
    expect(resumeRefusal(set('web', waiting), 'canary', REV)).toBe(
      'PackageSyncSet team-a/web is not holding a rollout (phase Gating)',
    );
    expect(
      setDetail({ set: set('web', held), children: new Set(), events: [], notes: [], now: NOW }).resumable,
    ).toEqual({
      wave: 'prod',
      revision: REV,
    });
  });

  it('writes a value the controller has not handled yet when the same person resumes the same wave again', () => {
    // the CLI and the UI write it with the same function (core/rollout/resume.ts)
    const first = resumeAnnotation(held, 'prod', REV, 'alice');
    expect(first).toBe(`prod@${SHA}:alice`);
    const again = resumeAnnotation({ ...held, lastHandledResume: first }, 'prod', REV, 'alice');
    expect(again).toBe(`prod@${REV}:alice`);
    // and back: each value differs from the one handled last
    expect(resumeAnnotation({ ...held, lastHandledResume: again }, 'prod', REV, 'alice')).toBe(first);
  });
});
