/**
 * One message's requests, as the delivery loop sends them (notifier-runtime.ts): the request itself, or a lookup
 * first whose answer decides it; a reply that must be read (Slack's Web API) is judged by what it says.
 */
import type { Built } from '../../core/notify/request.ts';
import type { SlackThread } from '../../core/notify/slack.ts';
import type { Sender, SendResult } from '../../adapters/notify/sender.ts';

/** What became of one message's delivery (a Slack Web API post also says where its thread is). */
export type Outcome =
  SendResult | { outcome: 'delivered'; status: number; thread?: SlackThread } | { outcome: 'skipped'; why: string };

export interface SendOptions {
  ca?: string;
  signal: AbortSignal;
}

/** Sends one message's built request (never a skip: that is settled without a send). */
export async function sendMessage(
  sender: Sender,
  built: Exclude<Built, { skip: string }>,
  opts: SendOptions,
): Promise<Outcome> {
  if ('request' in built) return await sendReading(sender, built, opts);
  // a lookup first (which pull request has this head): its answer decides the request, or that there is none
  const found = await sender.send(built.lookup, { ...opts, answer: true });
  const next =
    found.outcome === 'delivered' || (found.outcome === 'rejected' && found.status === 404)
      ? built.then(found.outcome === 'delivered' ? found.answer : undefined)
      : undefined;
  if (!next) return found;
  if ('request' in next) return await sender.send(next.request, opts);
  return { outcome: 'skipped', why: 'skip' in next ? next.skip : 'a second lookup is not supported' };
}

/** Sends one request; one whose answer must be read (Slack's Web API: `ok` in a 200) is judged by it. */
async function sendReading(
  sender: Sender,
  built: Extract<Built, { request: unknown }>,
  opts: SendOptions,
): Promise<Outcome> {
  if (!built.reply) return sender.send(built.request, opts);
  const res = await sender.send(built.request, { ...opts, answer: true });
  if (res.outcome !== 'delivered') return res;
  const a = built.reply(res.answer);
  if (a.ok) return { outcome: 'delivered', status: res.status, ...(a.thread ? { thread: a.thread } : {}) };
  return a.retry ? { outcome: 'retry', error: a.error } : { outcome: 'rejected', error: a.error, status: res.status };
}
