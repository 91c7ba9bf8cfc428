/**
 * Time windows and freezes of a rollout (docs/adr/0042), as Argo CD's sync windows read: each window opens at the
 * times its cron `schedule` names (UTC) and stays open for `duration`; when allow windows exist a wave starts only
 * inside one, and never inside a deny window (deny wins). cron-parser does the calendar arithmetic.
 */
import { CronExpressionParser } from 'cron-parser';
import type { RolloutWindow } from '../../api/packagesyncset.ts';
import { durationMs } from '../../api/packagesync.ts';

export interface WindowBlock {
  /** The window that blocks: the deny window in force, or the allow window that opens next. */
  window: string;
  reason: 'DenyWindowActive' | 'OutsideAllowWindows';
  /** When a wave may start (ms), or undefined when no window will ever let it (none found within a year). */
  opensAt?: number;
  message: string;
}

const YEAR_MS = 366 * 24 * 3600_000;

/** The start of the opening of `w` in force at `at` (ms), if it is open then. */
function openSince(w: RolloutWindow, at: number): number | undefined {
  // prev() is strictly before currentDate: +1 ms so an opening exactly at `at` counts
  const prev = CronExpressionParser.parse(w.schedule, { currentDate: new Date(at + 1), tz: 'UTC' })
    .prev()
    .getTime();
  return at < prev + durationMs(w.duration) ? prev : undefined;
}

function nextOpening(w: RolloutWindow, after: number): number {
  return CronExpressionParser.parse(w.schedule, { currentDate: new Date(after), tz: 'UTC' })
    .next()
    .getTime();
}

/** Undefined when a wave may start at `now`; else which window blocks and when a start is next allowed. */
export function windowBlock(windows: readonly RolloutWindow[] | undefined, now: number): WindowBlock | undefined {
  const allow = (windows ?? []).filter((w) => w.kind === 'allow');
  const deny = (windows ?? []).filter((w) => w.kind === 'deny');
  const blockerAt = (at: number): { window: RolloutWindow; until: number; denied: boolean } | undefined => {
    let denied: { window: RolloutWindow; until: number } | undefined;
    for (const w of deny) {
      const since = openSince(w, at);
      if (since === undefined) continue;
      const until = since + durationMs(w.duration);
      if (!denied || until > denied.until) denied = { window: w, until };
    }
    if (denied) return { ...denied, denied: true };
    if (allow.length === 0 || allow.some((w) => openSince(w, at) !== undefined)) return undefined;
    const next = allow.map((w) => ({ window: w, until: nextOpening(w, at) })).sort((a, b) => a.until - b.until)[0]!;
    return { ...next, denied: false };
  };
  const first = blockerAt(now);
  if (!first) return undefined;
  // when it opens: step past every deny window and closed stretch in the way (bounded: a year, 64 hops)
  let at = first.until;
  let opensAt: number | undefined;
  for (let hop = 0; hop < 64 && at - now <= YEAR_MS; hop++) {
    const b = blockerAt(at);
    if (!b) {
      opensAt = at;
      break;
    }
    at = Math.max(b.until, at + 1);
  }
  const when =
    opensAt === undefined ? 'no window opens within a year' : `waves start again at ${new Date(opensAt).toISOString()}`;
  const message = first.denied
    ? `deny window ${first.window.name} (${first.window.schedule} for ${first.window.duration}, UTC) is in force; ${when}`
    : `outside every allow window; ${first.window.name} (${first.window.schedule} for ${first.window.duration}, UTC) opens next; ${when}`;
  return {
    window: first.window.name,
    reason: first.denied ? 'DenyWindowActive' : 'OutsideAllowWindows',
    ...(opensAt !== undefined ? { opensAt } : {}),
    message,
  };
}
