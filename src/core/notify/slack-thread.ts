/**
 * The Slack thread of a revision, and what a chat.postMessage answer says: the types the provider (slack.ts) and
 * the delivery plan (request.ts) share, in a file of their own so neither imports the other.
 */

/** Where the first message of a revision landed: its replies go there. */
export interface SlackThread {
  uid: string;
  revision: string;
  /** The first message's `ts` (Slack's message id). */
  ts: string;
  /** The channel's id as Slack answered it (a reply must name the channel the parent is in). */
  channel: string;
}

/** What a chat.postMessage answer says (HTTP 200 either way: the outcome is in the body's `ok`). */
export type SlackAnswer = { ok: true; thread?: SlackThread } | { ok: false; error: string; retry: boolean };
