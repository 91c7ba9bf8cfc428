import { describe, expect, it } from 'vitest';
import { childName, generateTargets, setLabelValue, type ClusterSecret } from './targets.ts';
import { matchesSelector } from './selector.ts';
import { planWaves, resolveIntOrPercent } from './waves.ts';
import { rolloutSpec } from './fleet-model.test-support.ts';

const cluster = (name: string, namespace: string, labels: Record<string, string> = {}): ClusterSecret => ({
  name,
  namespace,
  labels: { 'packagesync.io/secret-type': 'cluster', ...labels },
});

describe('generateTargets', () => {
  it('takes only registered clusters of the set’s own namespace: a tenant never reaches another namespace’s Secret', () => {
    const secrets = [
      cluster('prod-eu', 'team-a', { env: 'prod' }),
      cluster('prod-us', 'team-b', { env: 'prod' }), // another tenant's cluster
      { name: 'git-auth', namespace: 'team-a', labels: { env: 'prod' } }, // not a registered cluster
      cluster('dev', 'team-a', { env: 'dev' }),
    ];
    const targets = generateTargets({ name: 'web', namespace: 'team-a' }, secrets, { matchLabels: { env: 'prod' } });
    expect(targets.map((t) => [t.name, t.child])).toEqual([['prod-eu', 'web-prod-eu']]);
    expect(generateTargets({ name: 'web', namespace: 'team-a' }, secrets, undefined).map((t) => t.name)).toEqual([
      'dev',
      'prod-eu',
    ]);
  });

  it('multiplies clusters by directories, with distinct deterministic child names', () => {
    const t = generateTargets({ name: 'web', namespace: 'a' }, [cluster('c1', 'a')], undefined, [
      'apps/a-b',
      'apps/a/b',
    ]);
    expect(t.map((x) => x.name)).toEqual(['c1/apps/a-b', 'c1/apps/a/b']);
    expect(t[0]!.child).not.toBe(t[1]!.child);
    expect(t[0]!.child).toMatch(/^web-c1-apps-a-b-[0-9a-f]{8}$/);
    expect(
      generateTargets({ name: 'web', namespace: 'a' }, [cluster('c1', 'a')], undefined, ['apps/a-b'])[0]!.child,
    ).toBe(t[0]!.child);
  });

  it('keeps names within Kubernetes limits', () => {
    const long = 'x'.repeat(200);
    const n = childName(long, long);
    expect(n.length).toBeLessThanOrEqual(253);
    expect(n).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    expect(childName(long, long)).toBe(n);
    expect(setLabelValue(long).length).toBeLessThanOrEqual(63);
    expect(setLabelValue('web')).toBe('web');
  });
});

describe('matchesSelector', () => {
  it('has Kubernetes semantics: matchLabels and expressions ANDed, NotIn matches a missing key', () => {
    const labels = { env: 'prod', region: 'eu' };
    expect(
      matchesSelector({ matchExpressions: [{ key: 'region', operator: 'In', values: ['eu', 'us'] }] }, labels),
    ).toBe(true);
    expect(
      matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['canary'] }] }, labels),
    ).toBe(true);
    expect(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, labels)).toBe(false);
    expect(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, labels)).toBe(true);
    expect(
      matchesSelector(
        { matchLabels: { env: 'prod' }, matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['eu'] }] },
        labels,
      ),
    ).toBe(false);
    expect(matchesSelector({}, labels)).toBe(true);
  });
});

describe('planWaves', () => {
  const targets = generateTargets(
    { name: 'web', namespace: 'a' },
    Array.from({ length: 10 }, (_, i) =>
      cluster(`c${i}`, 'a', { ring: i < 2 ? 'canary' : 'main', region: i % 2 ? 'us' : 'eu' }),
    ),
    undefined,
  );

  it('takes by selector, count and percent in order, the rest last; what no wave takes is unassigned', () => {
    const waves = rolloutSpec({
      waves: [
        { name: 'canary', targets: { selector: { matchLabels: { ring: 'canary' } } } },
        { name: 'eu', targets: { selector: { matchLabels: { region: 'eu' } }, count: 2 } },
        { name: 'pct', targets: { percent: 25 } },
      ],
    }).waves;
    const { plan, unassigned } = planWaves(targets, waves);
    expect(plan).toEqual([
      { name: 'canary', targets: ['c0', 'c1'] },
      { name: 'eu', targets: ['c2', 'c4'] },
      { name: 'pct', targets: ['c3', 'c5', 'c6'] }, // 25% of 10, rounded up
    ]);
    expect(unassigned).toEqual(['c7', 'c8', 'c9']);
    expect(planWaves(targets, [...waves, { ...waves[0]!, name: 'rest', targets: undefined }]).unassigned).toEqual([]);
  });

  it('resolves IntOrString: budgets round down, parallelism up', () => {
    expect(resolveIntOrPercent('10%', 15, 'down', 0)).toBe(1);
    expect(resolveIntOrPercent('10%', 15, 'up', 0)).toBe(2);
    expect(resolveIntOrPercent(3, 15, 'down', 0)).toBe(3);
    expect(resolveIntOrPercent(undefined, 15, 'up', 15)).toBe(15);
  });
});
