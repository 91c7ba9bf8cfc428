import { describe, expect, it } from 'vitest';
import { entryOf } from '../inventory.ts';
import type { KubeObject } from '../object.ts';
import { withDigest } from './drift.ts';
import { driftedCondition, driftReport, MAX_DRIFTED_OBJECTS, sameDrift } from './drift-report.ts';
import { ownerLabels } from './ownership.ts';
import { planChanges, type ChangePlan } from './plan-changes.ts';

const owner = { name: 'web', namespace: 'team-a' };
const deploy = (name: string, replicas: number, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'team-a', labels: ownerLabels(owner), ...(annotations ? { annotations } : {}) },
  spec: { replicas },
});
/** The live copy of `desired` as our last apply left it, then edited. */
const liveOf = (desired: KubeObject, replicas: number): KubeObject => {
  const applied = withDigest(desired);
  return { ...applied, metadata: { ...applied.metadata, resourceVersion: '7' }, spec: { replicas } };
};
const key = (name: string) => `apps/Deployment/team-a/${name}`;

function plan(
  desired: KubeObject[],
  live: KubeObject[],
  opts: Parameters<typeof planChanges>[4] = {},
  inventory = desired,
): ChangePlan {
  const byKey = new Map(live.map((l) => [key(l.metadata.name), l]));
  const r = planChanges(desired, inventory.map(entryOf), byKey, owner, opts);
  if (!r.ok) throw new Error(r.failure.message);
  return r.value;
}

describe('planChanges: drift', () => {
  const a = deploy('a', 2);
  const b = deploy('b', 2);

  it.each([
    // [case, desired, live, policy, toApply, takeBack, drifted paths]
    [
      'edited, Correct: applied again, fields taken back',
      [a],
      [liveOf(a, 5)],
      'Correct',
      ['a'],
      ['a'],
      ['/spec/replicas'],
    ],
    ['edited, Detect: reported, nothing applied', [a], [liveOf(a, 5)], 'Detect', [], [], ['/spec/replicas']],
    ['unchanged: nothing at all', [a], [liveOf(a, 2)], 'Detect', [], [], []],
    ['the package changed the object: applied, not drift', [deploy('a', 3)], [liveOf(a, 5)], 'Detect', ['a'], [], []],
  ] as const)('%s', (_case, desired, live, policy, toApply, takeBack, paths) => {
    const p = plan([...desired], [...live], { driftPolicy: policy });
    expect([...p.toApply]).toEqual(toApply.map(key));
    expect([...p.takeBack]).toEqual(takeBack.map(key));
    expect(p.drifted.flatMap((d) => d.paths)).toEqual(paths);
  });

  it('an object deleted from the cluster is drift: recreated in Correct, reported missing in Detect', () => {
    expect([...plan([a], [], { driftPolicy: 'Correct' }).toApply]).toEqual([key('a')]);
    const detect = plan([a], [], { driftPolicy: 'Detect' });
    expect(detect.toApply.size).toBe(0);
    expect(detect.drifted).toEqual([expect.objectContaining({ missing: true, paths: [] })]);
  });

  it('a new object (not in the inventory) is created, whatever the policy', () => {
    const p = plan([a, b], [liveOf(a, 2)], { driftPolicy: 'Detect' }, [a]);
    expect([...p.toApply]).toEqual([key('b')]);
    expect(p.drifted).toEqual([]);
  });

  it('an ignored field is not drift, and the live value is what gets sent', () => {
    const rules = [{ paths: ['/spec/replicas'], target: { kind: 'Deployment' } }];
    const p = plan([a], [liveOf(a, 5)], { driftPolicy: 'Correct', ignore: rules });
    expect(p.toApply.size).toBe(0);
    expect(p.drifted).toEqual([]);
    expect(p.graph.nodes[0]!.object.spec).toEqual({ replicas: 5 });
    expect(p.graph.nodes[0]!.object.metadata.annotations).toEqual(withDigest(a).metadata.annotations);
    // the annotation on the object does the same
    const annotated = deploy('a', 2, { 'packagesync.io/ignore-fields': '/spec/replicas' });
    expect(plan([annotated], [liveOf(annotated, 5)]).toApply.size).toBe(0);
  });
});

describe('drift report', () => {
  const ref = (i: number) => ({ group: 'apps', kind: 'Deployment', namespace: 'a', name: `d${i}` });
  it('is bounded, and only its objects and fields count as a change', () => {
    const drifts = Array.from({ length: 25 }, (_, i) => ({ ref: ref(i), paths: ['/spec/replicas'], missing: false }));
    const r = driftReport(drifts, 't1')!;
    expect(r.total).toBe(25);
    expect(r.objects).toHaveLength(MAX_DRIFTED_OBJECTS);
    expect(sameDrift(r, driftReport(drifts, 't2'))).toBe(true);
    expect(sameDrift(r, driftReport(drifts.slice(1), 't1'))).toBe(false);
    expect(driftReport([], 't')).toBeUndefined();
  });

  it('makes Drifted=True only while objects drifted', () => {
    const r = driftReport([{ ref: ref(1), paths: ['/spec/replicas'], missing: false }], 't');
    expect(driftedCondition(r, 3)).toMatchObject({ type: 'Drifted', status: 'True', reason: 'DriftDetected' });
    expect(driftedCondition(r, 3)?.message).toContain('Deployment/a/d1 (/spec/replicas)');
    expect(driftedCondition(undefined, 3)).toBeUndefined();
  });
});
