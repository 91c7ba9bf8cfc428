import { describe, expect, it } from 'vitest';
import {
  decide,
  defaultLeaseNamespace,
  leaderIdentity,
  microTime,
  newLeaseSpec,
  observe,
  releasedSpec,
  type LeaseSpec,
} from './lease-record.ts';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const held = (holder: string, extra: Partial<LeaseSpec> = {}): LeaseSpec => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: microTime(T0 - 60_000),
  renewTime: microTime(T0),
  leaseTransitions: 3,
  ...extra,
});

describe('leader election decisions', () => {
  it('waits while another holder renewed within the lease duration (by our clock)', () => {
    const obs = observe(undefined, held('b'), T0);
    expect(decide(obs, 'a', T0 + 14_999, 15)).toEqual({ kind: 'held', holder: 'b' });
  });

  it('takes over a lease whose record has not changed for a lease duration, counting a transition', () => {
    const obs = observe(undefined, held('b'), T0);
    const d = decide(obs, 'a', T0 + 15_000, 15);
    expect(d).toMatchObject({
      kind: 'claim',
      spec: { holderIdentity: 'a', leaseTransitions: 4, leaseDurationSeconds: 15 },
    });
    if (d.kind === 'claim') expect(d.spec.acquireTime).toBe(microTime(T0 + 15_000));
  });

  it('ignores the holder renewTime: a skewed clock on the holder cannot make us take over early', () => {
    const stale = held('b', { renewTime: microTime(T0 - 3_600_000) });
    const obs = observe(undefined, stale, T0);
    expect(decide(obs, 'a', T0 + 1_000, 15).kind).toBe('held');
  });

  it('restarts the expiry clock whenever the record changes, and not when it does not', () => {
    const first = observe(undefined, held('b'), T0);
    const same = observe(first, { ...held('b') }, T0 + 10_000);
    expect(same.at).toBe(T0);
    const renewed = observe(same, held('b', { renewTime: microTime(T0 + 2_000) }), T0 + 10_000);
    expect(renewed.at).toBe(T0 + 10_000);
    expect(decide(renewed, 'a', T0 + 20_000, 15).kind).toBe('held');
  });

  it('takes a released lease at once', () => {
    const obs = observe(undefined, releasedSpec(held('b'), T0), T0);
    expect(decide(obs, 'a', T0, 15)).toMatchObject({
      kind: 'claim',
      spec: { holderIdentity: 'a', leaseTransitions: 4 },
    });
  });

  it('renews its own lease keeping acquireTime and the transition count', () => {
    const mine = held('a');
    const d = decide(observe(undefined, mine, T0), 'a', T0 + 2_000, 15);
    expect(d).toMatchObject({
      kind: 'claim',
      spec: {
        holderIdentity: 'a',
        acquireTime: mine.acquireTime,
        renewTime: microTime(T0 + 2_000),
        leaseTransitions: 3,
      },
    });
  });

  it('releases with an empty holder and a 1 s duration, as client-go does', () => {
    expect(releasedSpec(held('a'), T0)).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: microTime(T0),
      renewTime: microTime(T0),
      leaseTransitions: 3,
    });
  });

  it('formats MicroTime with six fractional digits', () => {
    expect(microTime(Date.parse('2025-01-02T03:04:05.678Z'))).toBe('2025-01-02T03:04:05.678000Z');
  });

  it('makes a unique identity per process from the hostname', () => {
    const a = leaderIdentity('pod-1');
    expect(a).toMatch(/^pod-1_[0-9a-f]{8}$/);
    expect(leaderIdentity('pod-1')).not.toBe(a);
  });

  it('takes the lease namespace from POD_NAMESPACE, else packagesync-system', () => {
    expect(defaultLeaseNamespace({ POD_NAMESPACE: 'ops' })).toBe('ops');
    expect(defaultLeaseNamespace({})).toBe('packagesync-system');
  });
});

describe('a new lease', () => {
  it('starts with this holder, zero transitions and equal acquire/renew times', () => {
    expect(newLeaseSpec('a', T0, 15)).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: microTime(T0),
      renewTime: microTime(T0),
      leaseTransitions: 0,
    });
  });
});
