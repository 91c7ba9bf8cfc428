import { describe, expect, it } from 'vitest';
import { LEASE_NAME, leaderElectionId, parseControllerConfig } from './controller-config.ts';

describe('leaderElectionId', () => {
  it('is the default Lease without sharding, and the explicit id when given', () => {
    expect(leaderElectionId({})).toBe(LEASE_NAME);
    expect(leaderElectionId({ leaderElectionId: 'shard-a', watchLabelSelector: 'x=y' })).toBe('shard-a');
  });

  it('gives each shard (label selector) a Lease of its own, the same for every replica of it', () => {
    const a = leaderElectionId({ watchLabelSelector: 'packagesync.io/shard=a' });
    const b = leaderElectionId({ watchLabelSelector: 'packagesync.io/shard=b' });
    expect(a).toMatch(new RegExp(`^${LEASE_NAME}-[0-9a-f]{10}$`));
    expect(a).not.toBe(b);
    expect(leaderElectionId({ watchLabelSelector: 'packagesync.io/shard=a' })).toBe(a);
  });

  it('rejects an id that is not a Lease name, naming the flag', () => {
    expect(() => parseControllerConfig({ leaderElectionId: 'Not A Name' })).toThrow(/--leader-election-id/);
  });
});

describe('the render cache bound', () => {
  // make bench's kustomize fleet found it: at 256 entries a 1,000-unit fleet re-ran kustomize on every resync
  it('holds a fleet of thousands of kustomize packages by default', () => {
    expect(parseControllerConfig({}).renderCacheEntries).toBeGreaterThanOrEqual(5000);
  });
});
