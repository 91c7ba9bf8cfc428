/**
 * Slack (docs/adr/0040, 0043): an incoming webhook (the Secret's `address`), or with a bot token (the Secret's
 * `token`, as Flux's slack Provider) the Web API's chat.postMessage in `spec.channel`. Only the Web API can thread:
 * an incoming webhook answers a bare `ok` without the message's `ts`. With it, the messages about one revision of
 * one PackageSync go into one thread, as Argo CD notifications' Slack `groupingKey` does: the first is posted to
 * the channel, its answer's `ts` is kept with the Notifier's outbox (durable, unlike Argo's in-memory map), and the
 * next ones reply with `thread_ts`. Progress (started, applied) stays in the thread; an ending (healthy, failed,
 * superseded, resolved) is also shown in the channel (`reply_broadcast`), so nobody has to open the thread to
 * learn how a deployment ended.
 */
import type { RecordMessage } from './record.ts';
import { json, type Built, type ProviderConfig } from './request.ts';
import type { SlackThread } from './slack-thread.ts';

export type { SlackAnswer, SlackThread } from './slack-thread.ts';

export const SLACK_API = 'https://slack.com/api/chat.postMessage';

/** Slack's own failures worth another try; any other error (invalid_auth, channel_not_found, …) will not change. */
const TRANSIENT = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'ratelimited']);
const PROGRESS: ReadonlySet<RecordMessage['kind']> = new Set(['started', 'applied']);

/** Slack mrkdwn treats &, < and > as control characters (links, mentions): escaped, text stays text. */
const slackEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function slackBody(title: string, text: string, url: string): { text: string; blocks: unknown[] } {
  const link = url ? `\n<${slackEscape(url)}|Open>` : '';
  return {
    text: `${title}: ${text}`,
    blocks: [
      {
        type: 'section',
        text: { type: 'mrkdwn', text: `*${slackEscape(title)}*\n${slackEscape(text)}${link}`.slice(0, 3000) },
      },
    ],
  };
}

/** The thread `msg` belongs in, if its revision's first message was posted already. */
export function threadOf(thread: SlackThread | undefined, msg: RecordMessage): SlackThread | undefined {
  return thread && thread.uid === msg.uid && thread.revision === msg.revision ? thread : undefined;
}

/**
 * The request for `msg`: an incoming webhook post without a token; with one, chat.postMessage in the channel
 * (`thread`: a reply in the revision's thread), and how to read its answer.
 */
export function slackRequest(
  cfg: ProviderConfig,
  msg: RecordMessage,
  title: string,
  text: string,
  url: string,
  thread: SlackThread | undefined,
): Built {
  const body = slackBody(title, text, url);
  if (!cfg.token) return { request: json(cfg.address, body) };
  const reply = thread ? { thread_ts: thread.ts, ...(PROGRESS.has(msg.kind) ? {} : { reply_broadcast: true }) } : {};
  const request = json(
    cfg.address,
    { channel: thread?.channel ?? cfg.channel, ...body, ...reply, unfurl_links: false },
    { authorization: `Bearer ${cfg.token}` },
  );
  // the Web API wants the charset said (it warns otherwise)
  request.headers['content-type'] = 'application/json; charset=utf-8';
  return {
    request,
    reply: (answer) => {
      const a = readSlackAnswer(answer);
      // a reply keeps the thread it went to; a first message starts the revision's thread
      if (!a.ok || thread || !a.thread) return a.ok ? { ok: true } : a;
      return { ok: true, thread: { uid: msg.uid, revision: msg.revision, ...a.thread } };
    },
  };
}

/** chat.postMessage's answer: `{ok: true, channel, ts}` or `{ok: false, error}` (a short code, safe to log). */
export function readSlackAnswer(answer: unknown):
  | { ok: true; thread?: { ts: string; channel: string } }
  | {
      ok: false;
      error: string;
      retry: boolean;
    } {
  const a = (answer ?? {}) as { ok?: unknown; ts?: unknown; channel?: unknown; error?: unknown };
  if (a.ok === true) {
    const ts = typeof a.ts === 'string' && /^[0-9]{1,12}\.[0-9]{1,9}$/.test(a.ts) ? a.ts : undefined;
    const channel = typeof a.channel === 'string' && /^[A-Z0-9]{1,32}$/.test(a.channel) ? a.channel : undefined;
    return ts && channel ? { ok: true, thread: { ts, channel } } : { ok: true };
  }
  const code = typeof a.error === 'string' && /^[a-z0-9_]{1,64}$/.test(a.error) ? a.error : 'unknown_error';
  return { ok: false, error: `Slack answered ${code}`, retry: TRANSIENT.has(code) };
}
