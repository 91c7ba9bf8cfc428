import { describe, expect, it } from 'vitest';
import type { SetSpec, SetStatus } from '../../api/packagesyncset.ts';
import type { PlanDocument } from '../plan/plan-render.ts';
import {
  MARKDOWN_STYLE,
  renderSetPlan,
  rolloutWaves,
  setPlanDocument,
  setPlanVerdict,
  TEXT_STYLE,
  type SetPlanTarget,
} from './set-plan.ts';
import { generateTargets } from './targets.ts';

const secrets = ['c1', 'c2', 'local', 'c3'].map((name) => ({
  name,
  namespace: 'team-a',
  labels: { 'packagesync.io/secret-type': 'cluster', ring: name === 'local' ? 'canary' : 'main' },
}));
const targets = generateTargets({ name: 'web', namespace: 'team-a' }, secrets, undefined);
const rollout = {
  onFailure: 'revert',
  waves: [{ name: 'canary', targets: { selector: { matchLabels: { ring: 'canary' } } } }, { name: 'main' }],
} as unknown as SetSpec['rollout'];

const REV = `main@sha1:${'a'.repeat(40)}`;
const OLD = `main@sha1:${'b'.repeat(40)}`;

function plan(create: number, wouldFail = false): PlanDocument {
  return {
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'Plan',
    packageSync: { namespace: 'team-a', name: 'x' },
    source: { revision: REV },
    identity: null,
    digest: 'sha256:0',
    renderDigest: 'sha256:0',
    wouldFail,
    prunesBlocked: false,
    summary: {
      create,
      update: 0,
      recreate: 0,
      prune: 0,
      keep: 0,
      conflict: 0,
      reject: wouldFail ? 1 : 0,
      immutable: 0,
      skip: 0,
      unchanged: 1,
      rolls: 0,
    },
    actions: Array.from({ length: create }, (_, i) => ({
      action: 'create' as const,
      id: `ConfigMap/team-a/cm${i}`,
      object: { group: '', kind: 'ConfigMap', namespace: 'team-a', name: `cm${i}` },
    })),
  };
}

const entry = (name: string, more: Partial<SetPlanTarget>): SetPlanTarget => ({
  name,
  cluster: name,
  child: `web-${name}`,
  ...more,
});

describe('rolloutWaves', () => {
  it('takes the waves a rollout starting now would take, in wave order', () => {
    const { plan: waves, unassigned } = rolloutWaves(targets, rollout, undefined, REV);
    expect(waves).toEqual([
      { name: 'canary', targets: ['local'] },
      { name: 'main', targets: ['c1', 'c2', 'c3'] },
    ]);
    expect(unassigned).toEqual([]);
  });

  it('keeps the waves frozen in status while that very revision rolls out, and only for it', () => {
    const status = {
      revision: REV,
      phase: 'Progressing',
      waves: [{ name: 'canary' }, { name: 'main' }],
      // frozen when it started: c3 was registered since, c1 went to the canary by the labels of that time
      targets: [
        { name: 'local', wave: 'canary' },
        { name: 'c1', wave: 'canary' },
        { name: 'c2', wave: 'main' },
      ],
    } as unknown as SetStatus;
    expect(rolloutWaves(targets, rollout, status, REV)).toEqual({
      plan: [
        { name: 'canary', targets: ['c1', 'local'] },
        { name: 'main', targets: ['c2'] },
      ],
      unassigned: ['c3'],
    });
    // a newer revision starts a new rollout: waves from the spec again
    expect(rolloutWaves(targets, rollout, { ...status, revision: OLD }, REV).plan[0]).toEqual({
      name: 'canary',
      targets: ['local'],
    });
  });
});

describe('setPlanDocument', () => {
  it('counts per wave and in all; an unreachable target is named, counted, and the others stay planned', () => {
    const doc = setPlanDocument(
      { packageSyncSet: { namespace: 'team-a', name: 'web' }, revision: REV, rollout: {}, unassigned: [] },
      [
        { name: 'canary', targets: [entry('local', { plan: plan(2) })] },
        {
          name: 'main',
          targets: [
            entry('c1', { plan: plan(0) }),
            entry('c2', { error: { unreachable: true, message: 'connect ECONNREFUSED 127.0.0.1:1' } }),
          ],
        },
      ],
    );
    expect(doc.waves.map((w) => [w.name, w.counts])).toEqual([
      ['canary', { targets: 1, planned: 1, changed: 1, wouldFail: 0, unreachable: 0 }],
      ['main', { targets: 2, planned: 1, changed: 0, wouldFail: 0, unreachable: 1 }],
    ]);
    expect(doc.counts).toEqual({ targets: 3, planned: 2, changed: 1, wouldFail: 0, unreachable: 1 });
    expect(setPlanVerdict(doc)).toBe('partial');

    const text = renderSetPlan(
      doc,
      TEXT_STYLE((d) => `PLAN ${d.summary.create}\n`),
    );
    const lines = text.split('\n');
    expect(lines[0]).toBe(`# Plan for PackageSyncSet team-a/web at ${REV}: 3 targets in 2 waves`);
    // wave order, then each target under its wave with its own plan text
    const at = (s: string) => lines.findIndex((l) => l.startsWith(s));
    expect(at('== wave 1 of 2: canary')).toBeLessThan(at('-- target local'));
    expect(at('-- target local')).toBeLessThan(at('== wave 2 of 2: main'));
    expect(lines[at('-- target local') + 1]).toBe('PLAN 2');
    expect(text).toContain(
      '-- target c2 (cluster c2; PackageSync web-c2)\nNot planned (unreachable): connect ECONNREFUSED',
    );
    expect(lines.at(-2)).toBe('Summary: 3 targets: 2 planned (1 with changes), 1 unreachable; unreachable: c2');

    // markdown (a pull-request comment): the same structure under headings one level above each target's plan
    const md = renderSetPlan(
      doc,
      MARKDOWN_STYLE(() => '### PackageSync …\n'),
    ).split('\n');
    expect(md[0]).toBe(`## Plan for PackageSyncSet team-a/web at ${REV}: 3 targets in 2 waves`);
    expect(md).toContain('### wave 2 of 2: main — 2 targets: 1 planned (0 with changes), 1 unreachable');
    expect(md).toContain('#### target c1 (cluster c1; PackageSync web-c1)');
  });

  it('would fail outranks a target not planned, which outranks changes', () => {
    const doc = (targets: SetPlanTarget[]) =>
      setPlanDocument({ packageSyncSet: { namespace: 'a', name: 'w' }, revision: REV, rollout: {}, unassigned: [] }, [
        { name: 'all', targets },
      ]);
    const down = entry('c2', { error: { unreachable: true, message: 'down' } });
    expect(setPlanVerdict(doc([entry('c1', { plan: plan(1, true) }), down]))).toBe('wouldFail');
    // a target that cannot be planned for a reason its child would fail on too (its render, its Secret) would fail
    expect(setPlanVerdict(doc([entry('c1', { error: { unreachable: false, message: 'PathNotFound' } }), down]))).toBe(
      'wouldFail',
    );
    expect(setPlanVerdict(doc([entry('c1', { plan: plan(1) }), down]))).toBe('partial');
    expect(setPlanVerdict(doc([entry('c1', { plan: plan(1) })]))).toBe('changes');
    expect(setPlanVerdict(doc([entry('c1', { plan: plan(0) })]))).toBe('none');
  });
});
