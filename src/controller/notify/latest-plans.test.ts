import { describe, expect, it } from 'vitest';
import { LatestPlans } from './latest-plans.ts';

const ps = { namespace: 'team-a', name: 'web', uid: 'u1' };
const cm = (name: string) => ({ group: '', kind: 'ConfigMap', namespace: 'team-a', name });

describe('the last apply per PackageSync, for its comment', () => {
  it("keeps a revision's changes when a later reconcile of it changed nothing; a new revision replaces them", () => {
    const plans = new LatestPlans();
    plans.record(ps, 'r1', [{ ref: cm('a'), action: 'created' }]);
    plans.record(ps, 'r1', [{ ref: cm('a'), action: 'unchanged' }]);
    expect(plans.of('team-a', 'web', 'u1', 'r1')).toMatchObject({ plan: { total: 1 } });
    plans.record(ps, 'r2', [{ ref: cm('a'), action: 'unchanged' }]);
    expect(plans.of('team-a', 'web', 'u1', 'r2')).toMatchObject({ plan: { total: 0, unchanged: 1 } });
    expect(plans.of('team-a', 'web', 'u1', 'r1')).toHaveProperty('missing');
  });

  it('another PackageSync under the same name, or one forgotten, has no list', () => {
    const plans = new LatestPlans();
    plans.record(ps, 'r1', [{ ref: cm('a'), action: 'created' }]);
    expect(plans.of('team-a', 'web', 'u2', 'r1')).toHaveProperty('missing');
    plans.forget('team-a', 'web');
    expect(plans.of('team-a', 'web', 'u1', 'r1')).toHaveProperty('missing');
  });
});
