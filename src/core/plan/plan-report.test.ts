import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { DependsOnAnnotation } from './depends-on.ts';
import { buildGraph, type DependencyGraph } from './graph.ts';
import { OwnerLabel, PruneAnnotation } from './ownership.ts';
import {
  buildPlan,
  gatedBy,
  hasPlannedChanges,
  pruneCandidates,
  type DryRunOutcome,
  type PlanInput,
} from './plan-report.ts';

const cm = (name: string, dependsOn?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name,
    namespace: 'a',
    ...(dependsOn ? { annotations: { [DependsOnAnnotation]: `/namespaces/a/ConfigMap/${dependsOn}` } } : {}),
  },
});
const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } };

function graphOf(objects: KubeObject[]): DependencyGraph {
  const g = buildGraph(objects);
  if (!g.ok) throw new Error(g.failure.message);
  return g.value;
}

/** A plan over `objects` with outcomes by object name. */
function plan(objects: KubeObject[], outcomes: Record<string, DryRunOutcome>, extra: Partial<PlanInput> = {}) {
  const graph = graphOf(objects);
  const byIndex = new Map(
    Object.entries(outcomes).map(([name, o]) => [objects.findIndex((x) => x.metadata.name === name), o] as const),
  );
  return buildPlan({ graph, outcomes: byIndex, force: false, prunes: [], renderDigest: 'sha256:r', ...extra });
}

const reject: DryRunOutcome = { kind: 'reject', message: 'denied' };
const immutable: DryRunOutcome = { kind: 'immutable', fields: ['spec.clusterIP'], message: 'immutable' };
const update: DryRunOutcome = { kind: 'update', changes: [{ path: '.data.k', old: '"1"', new: '"2"' }], rolls: false };

describe('buildPlan', () => {
  it('lists actions in apply order: the Namespace before what lives in it, then prunes; unchanged only counted', () => {
    const p = plan(
      [cm('x'), ns, cm('y')],
      { x: { kind: 'create' }, a: { kind: 'create' } },
      {
        prunes: [{ ref: { group: '', kind: 'ConfigMap', namespace: 'a', name: 'old' } }],
        sources: new Map([['/ConfigMap/a/x', 'x.yaml']]),
      },
    );
    expect(p.actions.map((a) => `${a.action} ${a.id}`)).toEqual([
      'create Namespace/a',
      'create ConfigMap/a/x',
      'prune ConfigMap/a/old',
    ]);
    expect(p.summary).toMatchObject({ create: 2, prune: 1, unchanged: 1 });
    expect(p.wouldFail).toBe(false);
    expect(hasPlannedChanges(p)).toBe(true);
  });

  it.each<[string, DryRunOutcome, boolean, string]>([
    ['a rejection fails', reject, false, 'reject'],
    ['an immutable change fails', immutable, false, 'immutable'],
    ['an immutable change with force is a recreate', immutable, true, 'recreate'],
    [
      'a conflict fails',
      { kind: 'conflict', conflicts: [{ manager: 'm', field: '.f' }], message: 'c' },
      false,
      'conflict',
    ],
  ])('%s; its depends-on dependent would be skipped', (_what, outcome, force, action) => {
    const p = plan(
      [cm('base'), cm('dep', 'base'), cm('other')],
      { base: outcome, dep: { kind: 'create' }, other: update },
      { force },
    );
    expect(p.actions.find((a) => a.id === 'ConfigMap/a/base')?.action).toBe(action);
    const dep = p.actions.find((a) => a.id === 'ConfigMap/a/dep');
    if (action === 'recreate') {
      expect(dep?.action).toBe('create');
      expect(p.wouldFail).toBe(false);
    } else {
      expect(dep).toMatchObject({ action: 'skip', dependsOn: 'ConfigMap/a/base' });
      expect(p.wouldFail).toBe(true);
    }
    expect(p.actions.find((a) => a.id === 'ConfigMap/a/other')?.action).toBe('update');
  });

  it('an immutable change of an object opted in to recreate (packagesync.io/recreate) is a recreate', () => {
    const objects = [cm('x'), cm('y')];
    const graph = graphOf(objects);
    const p = buildPlan({
      graph,
      outcomes: new Map([
        [0, immutable],
        [1, immutable],
      ]),
      force: false,
      recreate: new Set([graph.nodes[0]!.key]),
      prunes: [],
      renderDigest: 'sha256:r',
    });
    expect(p.actions.map((a) => a.action)).toEqual(['recreate', 'immutable']);
  });

  it('blocks prunes when the apply would fail, and when the budget stops the run', () => {
    const prunes = [{ ref: { group: '', kind: 'ConfigMap', namespace: 'a', name: 'old' } }];
    expect(plan([cm('x')], { x: reject }, { prunes }).prunesBlocked).toBe(true);
    expect(plan([cm('x')], { x: update }, { prunes }).prunesBlocked).toBe(false);
    const budget = plan([cm('x')], {}, { prunes, pruneBudget: { exceeded: true, message: 'too many' } });
    expect([budget.wouldFail, budget.prunesBlocked]).toEqual([true, true]);
  });

  it('a plan of nothing but unchanged objects and kept ones changes nothing', () => {
    const p = plan(
      [cm('x')],
      {},
      { prunes: [{ ref: { group: '', kind: 'ConfigMap', namespace: 'a', name: 'o' }, keep: 'why' }] },
    );
    expect(hasPlannedChanges(p)).toBe(false);
    expect(p.actions).toEqual([expect.objectContaining({ action: 'keep', message: 'why' })]);
  });

  it('has a digest that follows the content, not the wording of messages', () => {
    const objects = [cm('x'), cm('y')];
    const base = plan(objects, { x: update, y: reject }).digest;
    expect(base).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(plan(objects, { x: update, y: reject }).digest).toBe(base);
    expect(plan(objects, { x: update, y: { kind: 'reject', message: 'reworded' } }).digest).toBe(base);
    expect(plan(objects, { x: update, y: { kind: 'create' } }).digest).not.toBe(base);
    const other: DryRunOutcome = {
      kind: 'update',
      changes: [{ path: '.data.k', old: '"9"', new: '"2"' }],
      rolls: false,
    };
    expect(plan(objects, { x: other, y: reject }).digest).not.toBe(base);
    expect(plan(objects, { x: update, y: reject }, { renderDigest: 'sha256:s' }).digest).not.toBe(base);
  });
});

describe('gatedBy', () => {
  it('skips dependents transitively, each naming what held it back; an independent object goes on', () => {
    const objects = [cm('a1'), cm('b', 'a1'), cm('c', 'b'), cm('free')];
    const skipped = gatedBy(graphOf(objects), new Set([0]));
    expect([...skipped].sort()).toEqual([
      [1, 0],
      [2, 1],
    ]);
  });

  it('skips what lives in a Namespace that would fail', () => {
    const skipped = gatedBy(graphOf([ns, cm('x')]), new Set([0]));
    expect([...skipped]).toEqual([[1, 0]]);
  });
});

describe('pruneCandidates', () => {
  const owner = { name: 'app', namespace: 'a' };
  const labels = { [OwnerLabel.name]: 'app', [OwnerLabel.namespace]: 'a' };
  const ref = (name: string, kind = 'ConfigMap') => ({
    group: '',
    kind,
    namespace: kind === 'Namespace' ? '' : 'a',
    name,
  });
  const live = new Map<string, KubeObject>([
    ['/ConfigMap/a/ours', { ...cm('ours'), metadata: { name: 'ours', namespace: 'a', labels } }],
    [
      '/ConfigMap/a/optout',
      {
        ...cm('optout'),
        metadata: { name: 'optout', namespace: 'a', labels, annotations: { [PruneAnnotation]: 'disabled' } },
      },
    ],
    ['/ConfigMap/a/theirs', cm('theirs')],
    ['/Namespace//a', { ...ns, metadata: { name: 'a', labels } }],
  ]);
  const plan = { prune: [ref('ours'), ref('optout'), ref('theirs'), ref('gone')], released: [ref('a', 'Namespace')] };

  it('prunes what is still ours, keeps the rest saying why, leaves out what is gone', () => {
    const got = pruneCandidates(plan, live, owner, true);
    expect(got.map((c) => [c.ref.name, c.keep === undefined ? 'prune' : 'keep'])).toEqual([
      ['ours', 'prune'],
      ['optout', 'keep'],
      ['theirs', 'keep'],
      ['a', 'keep'],
    ]);
    expect(got[3]!.keep).toContain('protected kind');
  });

  it('keeps everything with prune off', () => {
    expect(pruneCandidates(plan, live, owner, false).every((c) => c.keep !== undefined)).toBe(true);
  });
});
