/**
 * The churn soak's end-of-run checker (bench/lib/soak-check.ts) and its RSS slopes (bench/lib/soak-stats.ts),
 * on plain data: a soak that ends clean must say so, and each way a controller can go wrong must be named.
 */
import { describe, expect, it } from 'vitest';
import {
  checkSoak,
  countByKind,
  type ExpectedUnit,
  type SoakState,
  type UnitState,
} from '../../bench/lib/soak-check.ts';
import { pooledSlopeMiBPerHour, slopeMiBPerHour, afterWarmup } from '../../bench/lib/soak-stats.ts';

const REV = 'main@sha1:bbbb';
const ids = (name: string) => [`ns_${name}__ConfigMap`, `ns_${name}__Service`, `ns_${name}_apps_Deployment`];

function expected(name: string, content = 'rev1'): ExpectedUnit {
  const [cm, ...rest] = ids(name);
  return {
    name,
    revisions: [REV, 'main@sha1:cccc'],
    objects: new Map([[cm!, content], ...rest.map((id) => [id, undefined] as const)]),
  };
}
function unit(name: string, over: Partial<UnitState> = {}): UnitState {
  return {
    name,
    inventory: ids(name),
    ready: true,
    generation: 2,
    observedGeneration: 2,
    lastAppliedRevision: REV,
    deleting: false,
    ...over,
  };
}
const liveOf = (name: string, content = 'rev1') =>
  ids(name).map((id) => ({ id, owner: name, content: id.endsWith('ConfigMap') ? content : undefined }));

/** Two live units (a, b), one deleted (c), everything as it should be. */
function clean(): SoakState {
  return {
    expected: [expected('a'), expected('b')],
    units: [unit('a'), unit('b')],
    deleted: ['c'],
    live: [...liveOf('a'), ...liveOf('b')],
  };
}

describe('checkSoak', () => {
  it('finds nothing wrong in a clean end state', () => {
    expect(checkSoak(clean())).toEqual([]);
  });

  it('takes a commit after the last change of the package as its latest revision (seen later, or created later)', () => {
    const s = clean();
    expect(checkSoak({ ...s, units: [unit('a', { lastAppliedRevision: 'main@sha1:cccc' }), unit('b')] })).toEqual([]);
  });

  const cases: { name: string; mutate: (s: SoakState) => SoakState; want: [string, string, string?][] }[] = [
    {
      name: 'a deleted unit left its objects behind: orphans',
      mutate: (s) => ({ ...s, live: [...s.live, ...liveOf('c').slice(0, 1)] }),
      want: [['orphan', 'c', 'ns_c__ConfigMap']],
    },
    {
      name: 'an object of a live unit is gone: wrong delete, and its inventory names what does not live',
      mutate: (s) => ({ ...s, live: s.live.filter((o) => o.id !== 'ns_a_apps_Deployment') }),
      want: [
        ['wrong-delete', 'a', 'ns_a_apps_Deployment'],
        ['inventory-mismatch', 'a', 'ns_a_apps_Deployment'],
      ],
    },
    {
      name: 'an object left the package but is still in the inventory and live (not pruned)',
      mutate: (s) => ({
        ...s,
        units: [unit('a', { inventory: [...ids('a'), 'ns_a-extra__ConfigMap'] }), unit('b')],
        live: [...s.live, { id: 'ns_a-extra__ConfigMap', owner: 'a', content: 'x' }],
      }),
      want: [['inventory-mismatch', 'a', 'ns_a-extra__ConfigMap']],
    },
    {
      name: 'a live object labelled as ours that the inventory forgot: an orphan',
      mutate: (s) => ({ ...s, units: [unit('a', { inventory: ids('a').slice(1) }), unit('b')] }),
      want: [['orphan', 'a', 'ns_a__ConfigMap']],
    },
    {
      name: "an object in one unit's inventory, labelled as another's",
      mutate: (s) => ({
        ...s,
        live: s.live.map((o) => (o.id === 'ns_b__Service' ? { ...o, owner: 'a' } : o)),
      }),
      want: [
        ['inventory-mismatch', 'a', 'ns_b__Service'],
        ['inventory-mismatch', 'b', 'ns_b__Service'],
      ],
    },
    {
      name: "stale content: the ConfigMap is not the latest revision's",
      mutate: (s) => ({ ...s, live: [...liveOf('a', 'rev0'), ...liveOf('b')] }),
      want: [['stale-content', 'a', 'ns_a__ConfigMap']],
    },
    {
      name: 'not Ready, Ready at an older revision, Ready at an older generation',
      mutate: (s) => ({
        ...s,
        expected: [...s.expected, expected('d')],
        units: [
          unit('a', { ready: false, readyReason: 'ApplyFailed: boom' }),
          unit('b', { lastAppliedRevision: 'main@sha1:aaaa' }), // before its package last changed
          unit('d', { observedGeneration: 1 }),
        ],
        live: [...s.live, ...liveOf('d')],
      }),
      want: [
        ['not-ready', 'a'],
        ['not-ready', 'b'],
        ['not-ready', 'd'],
      ],
    },
    {
      name: 'a deleted PackageSync still there (finalizer stuck), and one the harness never made',
      mutate: (s) => ({
        ...s,
        units: [...s.units, unit('c', { deleting: true, inventory: [] }), unit('zz', { inventory: [] })],
      }),
      want: [
        ['stuck-deletion', 'c'],
        ['unexpected-unit', 'zz'],
      ],
    },
    {
      name: 'a live unit whose PackageSync vanished: every object is a wrong delete',
      mutate: (s) => ({
        ...s,
        units: [unit('b')],
        live: liveOf('b'),
      }),
      want: [['wrong-delete', 'a']],
    },
  ];
  it.each(cases)('$name', ({ mutate, want }) => {
    const got = checkSoak(mutate(clean())).map((v) => [v.kind, v.unit, ...(v.object ? [v.object] : [])]);
    expect(got).toEqual(want);
  });

  it('counts every kind, zero included', () => {
    const s = clean();
    const counts = countByKind(checkSoak({ ...s, live: [...s.live, ...liveOf('c')] }));
    expect(counts.orphan).toBe(3);
    expect(counts['wrong-delete']).toBe(0);
  });
});

describe('RSS slope', () => {
  const line = (from: number, to: number, start: number, perHour: number, base: number) =>
    Array.from({ length: to - from }, (_, k) => ({ t: from + k * 10, rssMiB: base + ((k * 10) / 3600) * perHour }));

  it('is the least-squares slope in MiB/hour', () => {
    expect(slopeMiBPerHour(line(0, 60, 0, 12, 100))).toBeCloseTo(12, 6);
    expect(slopeMiBPerHour(line(0, 2, 0, 12, 100))).toBeUndefined();
  });

  it('of V8 heap used too, over the samples that have it: RSS climbing over a level heap is the allocator', () => {
    const samples = line(0, 60, 0, 600, 100).map((s, k) => ({ ...s, heapUsedMiB: k === 3 ? undefined : 40 }));
    expect(slopeMiBPerHour(samples)).toBeCloseTo(600, 6);
    expect(slopeMiBPerHour(samples, 'heapUsedMiB')).toBeCloseTo(0, 6);
    expect(slopeMiBPerHour(line(0, 60, 0, 12, 100), 'heapUsedMiB')).toBeUndefined();
  });

  it('pools lifetimes without reading the restart saw-tooth as a trend', () => {
    // two flat lifetimes, the second at a higher level: flat within each, though a fit over all rises
    const a = line(0, 30, 0, 0, 100);
    const b = line(300, 330, 300, 0, 140).map((s) => ({ ...s, t: s.t + 3000 }));
    expect(slopeMiBPerHour([...a, ...b])).toBeGreaterThan(1);
    expect(pooledSlopeMiBPerHour([a, b])).toBeCloseTo(0, 6);
    expect(pooledSlopeMiBPerHour([line(0, 30, 0, 6, 100), line(0, 30, 0, 6, 300)])).toBeCloseTo(6, 6);
  });

  it('leaves the warm-up of each lifetime out', () => {
    const samples = [
      { t: 100, rssMiB: 50 },
      { t: 200, rssMiB: 120 },
      { t: 300, rssMiB: 121 },
    ];
    expect(afterWarmup(samples, 90, 60)).toEqual(samples.slice(1));
  });
});
