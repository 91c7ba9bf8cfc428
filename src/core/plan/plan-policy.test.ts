import { describe, expect, it } from 'vitest';
import { entryOf } from '../inventory.ts';
import type { KubeObject } from '../object.ts';
import { planChanges } from './plan-changes.ts';

const owner = { name: 'web', namespace: 'team-a' };
const ours = { 'packagesync.io/name': 'web', 'packagesync.io/namespace': 'team-a' };
const cm = (name: string, annotations: Record<string, string> = {}, data = { v: '1' }): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'team-a', annotations },
  data,
});
/** The live copy: what the package sent plus our labels, with other data when someone changed it. */
const live = (o: KubeObject, data?: Record<string, string>): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, labels: ours },
  ...(data ? { data } : {}),
});
const key = (name: string) => `/ConfigMap/team-a/${name}`;

describe('planChanges with per-object policy (object-policy.ts)', () => {
  const inp = cm('seed', { 'packagesync.io/apply': 'IfNotPresent' });
  const ign = cm('hands-off', { 'packagesync.io/apply': 'Ignore' });
  const rec = cm('job', { 'kustomize.toolkit.fluxcd.io/force': 'enabled' });

  it.each<[string, KubeObject, KubeObject | undefined, { apply: boolean; ignored: boolean; listed: boolean }]>([
    ['IfNotPresent, missing: sent', inp, undefined, { apply: true, ignored: false, listed: true }],
    [
      'IfNotPresent, changed by someone: not sent',
      inp,
      live(inp, { v: 'theirs' }),
      { apply: false, ignored: false, listed: true },
    ],
    ['Ignore, missing: not created, not listed', ign, undefined, { apply: false, ignored: true, listed: false }],
    [
      'Ignore, there and different: not sent, not listed',
      ign,
      live(ign, { v: 'theirs' }),
      { apply: false, ignored: true, listed: false },
    ],
    [
      'Ignore put on the live copy: not sent, still listed',
      cm('later'),
      live(cm('later', { 'packagesync.io/apply': 'Ignore' }), { v: 'theirs' }),
      { apply: false, ignored: true, listed: true },
    ],
    [
      'plain, changed by someone: sent',
      cm('plain'),
      live(cm('plain'), { v: 'theirs' }),
      { apply: true, ignored: false, listed: true },
    ],
  ])('%s', (_name, desired, current, expected) => {
    const liveMap = new Map(current ? [[key(desired.metadata.name), current]] : []);
    const r = planChanges([desired], [], liveMap, owner);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const k = key(desired.metadata.name);
    expect(r.value.toApply.has(k)).toBe(expected.apply);
    expect(r.value.ignored.has(k)).toBe(expected.ignored);
    expect(r.value.inventoryAfter.length > 0).toBe(expected.listed);
  });

  it('an object that moved to Ignore is neither pruned nor kept in the inventory, but listed while applying', () => {
    const r = planChanges([ign], [entryOf(ign)], new Map([[key('hands-off'), live(ign)]]), owner);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.prune).toEqual([]);
    expect(r.value.inventoryAfter).toEqual([]);
    expect(r.value.inventoryDuringApply).toEqual([entryOf(ign)]);
  });

  it('an ignored object another PackageSync owns is no conflict: it is not touched', () => {
    const theirs = {
      ...ign,
      metadata: { ...ign.metadata, labels: { 'packagesync.io/name': 'api', 'packagesync.io/namespace': 'team-a' } },
    };
    expect(planChanges([ign], [], new Map([[key('hands-off'), theirs]]), owner).ok).toBe(true);
  });

  it('recreate opt-ins are listed, from either copy', () => {
    const plain = cm('svc');
    const r = planChanges(
      [rec, plain],
      [],
      new Map([[key('svc'), live(cm('svc', { 'packagesync.io/recreate': 'enabled' }))]]),
      owner,
    );
    expect(r.ok && [...r.value.recreate].sort()).toEqual([key('job'), key('svc')]);
  });

  it('an unknown value fails the plan, naming the object and its file', () => {
    const r = planChanges([cm('typo', { 'packagesync.io/apply': 'Sometimes' })], [], new Map(), owner, {
      sources: new Map([[key('typo'), 'app/typo.yaml']]),
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure.reason).toBe('InvalidManifest');
    expect(r.failure.terminal).toBe(true);
    expect(r.failure.message).toBe(
      'ConfigMap/team-a/typo (app/typo.yaml): annotation packagesync.io/apply: "Sometimes" is not one of Merge, IfNotPresent, Ignore; fix the annotation in the package',
    );
  });
});
