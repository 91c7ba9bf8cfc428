import { describe, expect, it } from 'vitest';
import type { Change, ChangeAction } from './changeset.ts';
import { countChanges, hasChanges, summarizeChanges } from './changeset.ts';

const changes = (counts: Partial<Record<ChangeAction, number>>): Change[] =>
  Object.entries(counts).flatMap(([action, n]) =>
    Array.from({ length: n }, (_, i) => ({
      ref: { group: '', kind: 'ConfigMap', namespace: 'ns', name: `${action}-${i}` },
      action: action as ChangeAction,
    })),
  );

describe('summarizeChanges', () => {
  it.each<[Partial<Record<ChangeAction, number>>, string]>([
    [{ created: 12, configured: 3, pruned: 2 }, '12 created, 3 configured, 2 pruned'],
    [{ pruned: 2, created: 12, unchanged: 40, configured: 3 }, '12 created, 3 configured, 2 pruned'],
    [{ unchanged: 5 }, 'no changes'],
    [{}, 'no changes'],
    [{ configured: 1 }, '1 configured'],
    [{ created: 1, skipped: 2, failed: 1 }, '1 created, 2 skipped, 1 failed'],
  ])('%j → %s', (counts, expected) => {
    expect(summarizeChanges(changes(counts))).toBe(expected);
  });
});

describe('countChanges', () => {
  it('counts every action, zeros included', () => {
    expect(countChanges(changes({ created: 2, unchanged: 1 }))).toEqual({
      created: 2,
      configured: 0,
      unchanged: 1,
      pruned: 0,
      skipped: 0,
      failed: 0,
    });
  });
});

describe('hasChanges', () => {
  it.each<[Partial<Record<ChangeAction, number>>, boolean]>([
    [{}, false],
    [{ unchanged: 3, skipped: 1, failed: 1 }, false],
    [{ created: 1 }, true],
    [{ configured: 1 }, true],
    [{ pruned: 1 }, true],
  ])('%j → %s', (counts, expected) => {
    expect(hasChanges(changes(counts))).toBe(expected);
  });
});
