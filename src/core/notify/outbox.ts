/**
 * A Notifier's durable state as plain data (docs/adr/0040): what it remembers of each PackageSync and the messages
 * not delivered yet, in order. The controller keeps it in one ConfigMap and writes it before it sends anything,
 * so a crash or a leader change loses nothing; these functions decide, the adapter stores and sends.
 */
import type { RecordMemory, RecordMessage } from './record.ts';
import type { SlackThread } from './slack.ts';

export interface OutboxEntry {
  msg: RecordMessage;
  /** Epoch ms. */
  enqueuedAt: number;
  attempts: number;
  /** Not before (epoch ms). */
  nextAttemptAt: number;
  /** The last failed attempt, as a short text without URL or token. */
  lastError?: string;
}

export interface NotifierState {
  version: 1;
  /** PackageSync name → what this Notifier remembers of it. */
  records: Record<string, RecordMemory>;
  /** Oldest first; delivered strictly in order. */
  outbox: OutboxEntry[];
  /** Slack with a bot token: PackageSync name → its current revision's thread (slack.ts); one per PackageSync. */
  threads?: Record<string, SlackThread>;
}

export const emptyState = (): NotifierState => ({ version: 1, records: {}, outbox: [] });

export const OUTBOX_MAX = 500;
/** A message not delivered within a day is dropped: whoever waited for it has long looked elsewhere. */
export const MAX_AGE_MS = 24 * 60 * 60_000;
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_MAX_MS = 5 * 60_000;

/** Reads a stored state; anything unreadable is an empty state (and says so). */
export function parseState(text: string | undefined): { state: NotifierState; problem?: string } {
  if (!text) return { state: emptyState() };
  try {
    const s = JSON.parse(text) as Partial<NotifierState>;
    if (s.version !== 1 || typeof s.records !== 'object' || !Array.isArray(s.outbox)) throw new Error('unknown shape');
    const threads = typeof s.threads === 'object' && s.threads ? { threads: s.threads } : {};
    return { state: { version: 1, records: s.records ?? {}, outbox: s.outbox, ...threads } };
  } catch (e) {
    return { state: emptyState(), problem: `stored outbox unreadable (${(e as Error).message}): starting empty` };
  }
}

/**
 * Appends messages, keeping the outbox at `max`: first a PackageSync's queued progress messages (started, applied,
 * never attempted) that a newer message of the same PackageSync makes stale go, then the oldest. Returns how many
 * were dropped that way (counted as `dropped`).
 */
export function enqueue(
  state: NotifierState,
  msgs: readonly RecordMessage[],
  now: number,
  max = OUTBOX_MAX,
): { state: NotifierState; dropped: number } {
  let outbox = [...state.outbox, ...msgs.map((msg) => ({ msg, enqueuedAt: now, attempts: 0, nextAttemptAt: now }))];
  let dropped = 0;
  if (outbox.length > max) {
    const newest = new Map<string, number>();
    outbox.forEach((e, i) => newest.set(e.msg.uid, i));
    const stale = (e: OutboxEntry, i: number) =>
      (e.msg.kind === 'started' || e.msg.kind === 'applied') && e.attempts === 0 && newest.get(e.msg.uid)! > i;
    const keep: OutboxEntry[] = [];
    let excess = outbox.length - max;
    outbox.forEach((e, i) => {
      if (excess > 0 && stale(e, i)) {
        excess--;
        dropped++;
      } else keep.push(e);
    });
    outbox = keep;
  }
  if (outbox.length > max) {
    dropped += outbox.length - max;
    outbox = outbox.slice(outbox.length - max);
  }
  return { state: { ...state, outbox }, dropped };
}

/** The next message to send (the head, strictly in order), when it is due; else when to look again. */
export function nextDue(state: NotifierState, now: number): { entry?: OutboxEntry; wakeAt?: number } {
  const head = state.outbox[0];
  if (!head) return {};
  return head.nextAttemptAt <= now ? { entry: head } : { wakeAt: head.nextAttemptAt };
}

/** The message left the outbox: delivered, refused for good, or expired. */
export function removeEntry(state: NotifierState, id: string): NotifierState {
  return { ...state, outbox: state.outbox.filter((e) => e.msg.id !== id) };
}

/**
 * An attempt failed and will be retried: exponential back-off from 1 s to 5 min with ±20 % jitter (`random` in
 * [0, 1)), or the receiver's Retry-After when it gave one (never sooner).
 */
export function retryLater(
  state: NotifierState,
  id: string,
  now: number,
  error: string,
  random: number,
  retryAfterMs?: number,
): NotifierState {
  return {
    ...state,
    outbox: state.outbox.map((e) => {
      if (e.msg.id !== id) return e;
      const attempts = e.attempts + 1;
      const wait = Math.max(backoffMs(attempts, random), retryAfterMs ?? 0);
      return { ...e, attempts, nextAttemptAt: now + wait, lastError: error };
    }),
  };
}

export function backoffMs(attempts: number, random: number): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.8 + 0.4 * random));
}

export const isExpired = (e: OutboxEntry, now: number) => now - e.enqueuedAt > MAX_AGE_MS;

export function outboxStats(state: NotifierState, now: number): { depth: number; oldestSeconds: number } {
  const oldest = state.outbox[0]?.enqueuedAt;
  return { depth: state.outbox.length, oldestSeconds: oldest === undefined ? 0 : Math.max(0, (now - oldest) / 1000) };
}

/** A PackageSync deleted: its memory and its thread go (its queued messages are still delivered). */
export function forgetRecord(state: NotifierState, name: string): NotifierState {
  if (!(name in state.records) && !(name in (state.threads ?? {}))) return state;
  const records = { ...state.records };
  delete records[name];
  const threads = { ...state.threads };
  delete threads[name];
  return { ...state, records, ...(state.threads ? { threads } : {}) };
}

/** A revision's first Slack message was posted: its thread replaces the PackageSync's previous one. */
export function keepThread(state: NotifierState, name: string, thread: SlackThread): NotifierState {
  return { ...state, threads: { ...state.threads, [name]: thread } };
}
