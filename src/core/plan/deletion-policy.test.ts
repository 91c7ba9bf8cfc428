import { describe, expect, it } from 'vitest';
import { teardownFor, type DeletionPolicy, type Teardown } from './deletion-policy.ts';

describe('teardownFor', () => {
  const none: Teardown = { delete: false, waitForTermination: false };
  const del: Teardown = { delete: true, waitForTermination: false };
  const wait: Teardown = { delete: true, waitForTermination: true };
  it.each<[DeletionPolicy, boolean, boolean, Teardown]>([
    ['MirrorPrune', true, false, del],
    ['MirrorPrune', false, false, none],
    ['Delete', true, false, del],
    ['Delete', false, false, del],
    ['WaitForTermination', true, false, wait],
    ['WaitForTermination', false, false, wait],
    ['Orphan', true, false, none],
    ['Orphan', false, false, none],
    ['MirrorPrune', true, true, none],
    ['Delete', true, true, none],
    ['WaitForTermination', false, true, none],
  ])('%s, prune %s, suspend %s → %o', (policy, prune, suspend, expected) => {
    expect(teardownFor(policy, prune, suspend)).toEqual(expected);
  });
});
