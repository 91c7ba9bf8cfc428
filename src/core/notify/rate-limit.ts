/**
 * Per-Notifier rate limits by provider (docs/adr/0040), a token bucket on plain data. Slack's incoming webhooks
 * allow about one message a second; Teams' about four; the forges' APIs are generous but shared with their users.
 */
import type { ProviderType } from '../../api/notifier.ts';

export const RATE_PER_SECOND: Record<ProviderType, number> = {
  slack: 1,
  msteams: 4,
  github: 5,
  gitlab: 5,
  gitea: 5,
  generic: 10,
};

export interface Bucket {
  tokens: number;
  /** Epoch ms of the last refill. */
  at: number;
}

/** Takes one token if there is one (`waitMs` 0), else says how long until there is. Burst: one second's worth. */
export function takeToken(
  bucket: Bucket | undefined,
  ratePerSecond: number,
  now: number,
): { bucket: Bucket; waitMs: number } {
  const burst = Math.max(1, ratePerSecond);
  const prev = bucket ?? { tokens: burst, at: now };
  const tokens = Math.min(burst, prev.tokens + ((now - prev.at) / 1000) * ratePerSecond);
  if (tokens >= 1) return { bucket: { tokens: tokens - 1, at: now }, waitMs: 0 };
  return { bucket: { tokens, at: now }, waitMs: Math.ceil(((1 - tokens) / ratePerSecond) * 1000) };
}
