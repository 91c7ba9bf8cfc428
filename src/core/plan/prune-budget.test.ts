import { describe, expect, it } from 'vitest';
import { checkPruneBudget, type PruneBudgetInput } from './prune-budget.ts';

const input = (deletions: number, inventory: number, approved?: string): PruneBudgetInput => ({
  deletions,
  inventory,
  budget: { maxDeletions: 10, maxPercent: 50 },
  revision: 'main@sha1:abc',
  approved,
  target: 'pks/web -n team-a',
  annotation: 'packagesync.io/prune-approved',
});

describe('checkPruneBudget', () => {
  it.each([
    ['a few deletions, whatever the share', 10, 10],
    ['many deletions, a small share', 40, 100],
    ['exactly the share', 50, 100],
  ])('allows %s', (_what, deletions, inventory) => {
    expect(checkPruneBudget(input(deletions, inventory)).ok).toBe(true);
  });

  it('stops more than maxDeletions that are also more than maxPercent, saying how to approve', () => {
    const r = checkPruneBudget(input(12, 20));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure).toMatchObject({ reason: 'PruneBudgetExceeded', terminal: true });
    expect(r.failure.message).toBe(
      'revision main@sha1:abc would delete 12 of the 20 objects in the inventory (60%): more than spec.pruneBudget ' +
        'allows (10 objects, or 50% of the inventory); nothing was applied or deleted. If that is intended, approve ' +
        'this revision: kubectl annotate pks/web -n team-a packagesync.io/prune-approved=main@sha1:abc --overwrite ' +
        '(or raise spec.pruneBudget)',
    );
  });

  it('lets an approved revision through, and only that one', () => {
    expect(checkPruneBudget(input(12, 20, 'main@sha1:abc')).ok).toBe(true);
    expect(checkPruneBudget(input(12, 20, 'main@sha1:old')).ok).toBe(false);
  });
});
