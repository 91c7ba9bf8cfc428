/** A message's outbound HTTP request as plain data, and the Notifier configuration it is built from. */
import type { ProviderType } from '../../api/notifier.ts';
import type { SlackAnswer } from './slack-thread.ts';

export interface OutboundRequest {
  method: 'POST' | 'GET';
  url: string;
  headers: Record<string, string>;
  /** '' for a GET. */
  body: string;
}

/** A Notifier as delivery needs it: its spec with the Secret's values in place. */
export interface ProviderConfig {
  type: ProviderType;
  /** The webhook URL, or the repository URL of a forge. */
  address: string;
  /** HMAC key (generic) or API token (forges). */
  token?: string;
  title?: string;
  text?: string;
  targetURL?: string;
  context?: string;
  /** Slack with a bot token: the channel chat.postMessage posts in. */
  channel?: string;
}

/**
 * What delivering a message takes: one request (`reply`: its 2xx answer must be read, as Slack's Web API says
 * `ok: false` with a 200); or a lookup first (which pull request has this commit as its head), whose answer
 * (`undefined`: the forge said 404) decides the request; or nothing, and why.
 */
export type Built =
  | { request: OutboundRequest; reply?: (answer: unknown) => SlackAnswer }
  | { lookup: OutboundRequest; then: (answer: unknown) => Built }
  | { skip: string };

export function json(url: string, body: unknown, headers: Record<string, string> = {}): OutboundRequest {
  return {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}

/** Only an http(s) URL is a link; anything else (a template gone wrong, javascript:) is left out. */
export function safeUrl(s: string): string {
  try {
    const u = new URL(s);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.toString() : '';
  } catch {
    return '';
  }
}
