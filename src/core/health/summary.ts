import type { ObjectRef } from '../object.ts';
import { describeRef } from '../object.ts';
import type { Health, HealthStatus } from './health.ts';
import { HEALTH_SEVERITY, plural, trimDot } from './health.ts';

export interface ObjectHealth {
  object: ObjectRef;
  health: Health;
}

export interface HealthSummary {
  /** The most severe status present (Current for an empty list): what the whole set amounts to. */
  status: HealthStatus;
  total: number;
  /** Every status, zeros included, so status.objects has a stable shape. */
  counts: Record<HealthStatus, number>;
  /** The first object, in input order, with the most severe status; absent when all are Current. */
  first?: ObjectHealth;
  /** e.g. "2 objects in progress: Deployment/team-a/web (1 of 2 replicas ready)". */
  message: string;
}

const PHRASE: Record<HealthStatus, string> = {
  Failed: 'failed',
  NotFound: 'not found',
  Unknown: 'with unknown status',
  Terminating: 'terminating',
  InProgress: 'in progress',
  Current: 'current',
};

export function summarizeHealth(list: readonly ObjectHealth[]): HealthSummary {
  const counts = Object.fromEntries(HEALTH_SEVERITY.map((s) => [s, 0])) as Record<HealthStatus, number>;
  for (const { health } of list) counts[health.status] += 1;
  const status = HEALTH_SEVERITY.find((s) => counts[s] > 0) ?? 'Current';
  const summary = { status, total: list.length, counts };
  if (list.length === 0) return { ...summary, message: 'no objects' };
  if (status === 'Current') return { ...summary, message: `${plural(list.length, 'object')} current` };

  const first = list.find((o) => o.health.status === status) as ObjectHealth;
  const others = HEALTH_SEVERITY.filter((s) => s !== status && s !== 'Current' && counts[s] > 0).map(
    (s) => `${counts[s]} ${PHRASE[s]}`,
  );
  const lead = `${plural(counts[status], 'object')} ${PHRASE[status]}: ${describeObject(first)}`;
  return { ...summary, first, message: others.length ? `${lead}; also ${others.join(', ')}` : lead };
}

/** `Kind/ns/name (message)`, without repeating the name when the message already starts with it. */
function describeObject({ object, health }: ObjectHealth): string {
  const name = describeRef(object);
  const message = health.message.startsWith(`${name}: `) ? health.message.slice(name.length + 2) : health.message;
  return `${name} (${trimDot(message)})`;
}

/** Longest message kept per object in describeUnhealthy, so one verbose object cannot crowd out the rest. */
const MAX_OBJECT_MESSAGE = 300;

/**
 * Every object that is not Current, most severe first, input order within a status:
 * `Deployment/team-a/web (0 of 2 replicas available; Pod web-7d9f-abcde: ImagePullBackOff: …); Widget…`.
 * What a timeout names, so nobody has to go looking for which object held the wait up and why.
 */
export function describeUnhealthy(list: readonly ObjectHealth[]): string {
  const rank = (o: ObjectHealth) => HEALTH_SEVERITY.indexOf(o.health.status);
  return list
    .filter((o) => o.health.status !== 'Current')
    .map((o, i) => ({ o, i }))
    .sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i)
    .map(({ o }) => {
      const text = describeObject(o);
      return text.length > MAX_OBJECT_MESSAGE ? `${text.slice(0, MAX_OBJECT_MESSAGE - 2)}…)` : text;
    })
    .join('; ');
}
