/**
 * The Lease record and the pure decisions of leader election, as client-go makes them: when a lease is
 * free, when it has expired (by the observer's own clock: the record did not change for a lease
 * duration), what a claim, a renewal and a release write.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

/** The last lease record seen and when (our clock) it last changed. */
export interface Observation {
  spec: LeaseSpec;
  at: number;
}

export type LeaseDecision = { kind: 'held'; holder: string } | { kind: 'claim'; spec: LeaseSpec };

/** hostname + random suffix: two processes on one host (or a restarted pod) never share an identity. */
export function leaderIdentity(host = hostname()): string {
  return `${host}_${randomBytes(4).toString('hex')}`;
}

export function defaultLeaseNamespace(env: NodeJS.ProcessEnv = process.env): string {
  return env.POD_NAMESPACE || 'packagesync-system';
}

/** metav1.MicroTime wants RFC 3339 with six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function observe(prev: Observation | undefined, spec: LeaseSpec, now: number): Observation {
  return prev && sameRecord(prev.spec, spec) ? prev : { spec, at: now };
}

function sameRecord(a: LeaseSpec, b: LeaseSpec): boolean {
  return (
    (a.holderIdentity ?? '') === (b.holderIdentity ?? '') &&
    a.renewTime === b.renewTime &&
    a.acquireTime === b.acquireTime &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    (a.leaseTransitions ?? 0) === (b.leaseTransitions ?? 0)
  );
}

/** Free, expired or ours → claim it (renewal keeps acquireTime and the transition count); else wait. */
export function decide(obs: Observation, identity: string, now: number, leaseDurationSeconds: number): LeaseDecision {
  const holder = obs.spec.holderIdentity ?? '';
  const validUntil = obs.at + (obs.spec.leaseDurationSeconds ?? 0) * 1000;
  if (holder !== '' && holder !== identity && validUntil > now) return { kind: 'held', holder };
  const ours = holder === identity;
  const t = microTime(now);
  const transitions = obs.spec.leaseTransitions ?? 0;
  return {
    kind: 'claim',
    spec: {
      holderIdentity: identity,
      leaseDurationSeconds,
      acquireTime: ours ? (obs.spec.acquireTime ?? t) : t,
      renewTime: t,
      leaseTransitions: ours ? transitions : transitions + 1,
    },
  };
}

/** The first record of a Lease that did not exist yet. */
export function newLeaseSpec(identity: string, now: number, leaseDurationSeconds: number): LeaseSpec {
  const t = microTime(now);
  return { holderIdentity: identity, leaseDurationSeconds, acquireTime: t, renewTime: t, leaseTransitions: 0 };
}

/** What client-go writes on release: nobody holds it, and it expires at once for anyone who still reads a holder. */
export function releasedSpec(spec: LeaseSpec, now: number): LeaseSpec {
  const t = microTime(now);
  return {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: t,
    renewTime: t,
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}
