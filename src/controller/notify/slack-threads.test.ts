/**
 * A slack Notifier with a bot token against a loopback HTTPS receiver that answers as Slack's chat.postMessage
 * does (docs/api: `{ok, channel, ts}` with a 200, `{ok: false, error}` with a 200 too) and checks each request
 * against it: the messages of one revision go into one thread, the thread survives a restart (kept with the
 * outbox), a new revision starts a new one, Slack's own errors are retried or refused by their code.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  startNotifyReceiver,
  type NotifyReceiver,
  type ReceivedRequest,
} from '../../../test/support/notify-receiver.ts';
import {
  current,
  failedStatus,
  healthy,
  MemoryStore,
  progressing,
  ps,
  SHA1,
  SHA2,
  start,
  stopAll,
  until,
} from '../../../test/support/notifier-runtime.ts';

const TOKEN = 'xoxb-test-bot-token-0123456789';
let receiver: NotifyReceiver;
afterEach(stopAll);

/** Slack's Web API on the receiver: checks the request, answers with the channel's id and a new ts. */
function slackApi(r: NotifyReceiver, fail: (req: ReceivedRequest) => string | undefined = () => undefined) {
  let n = 0;
  const problems: string[] = [];
  r.answer = (req) => {
    const wrong = [
      req.method !== 'POST' && 'method',
      req.path !== '/api/chat.postMessage' && 'path',
      req.headers.authorization !== `Bearer ${TOKEN}` && 'authorization',
      req.headers['content-type'] !== 'application/json; charset=utf-8' && 'content-type',
      !req.json.channel && 'channel',
      !req.json.text && 'text',
      req.json.thread_ts !== undefined && !/^\d+\.\d+$/.test(String(req.json.thread_ts)) && 'thread_ts',
    ].filter(Boolean);
    if (wrong.length > 0) {
      problems.push(`${req.path}: ${wrong.join(', ')}`);
      return { status: 400 };
    }
    const error = fail(req);
    const body = error
      ? { ok: false, error }
      : { ok: true, channel: 'C0123CHAN', ts: `1700000000.${String(++n).padStart(6, '0')}` };
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  };
  return problems;
}

const spec = (url: string) => ({
  type: 'slack' as const,
  address: `${url}/api/chat.postMessage`,
  channel: '#deploys',
  secretRef: { name: 's' },
  events: ['started' as const, 'applied' as const, 'healthy' as const, 'failed' as const, 'resolved' as const],
});
const posted = () => receiver.requests.filter((r) => r.answered === 200);
const tsOf = (r: ReceivedRequest) => (JSON.parse(r.body) as { thread_ts?: string }).thread_ts;

describe('a slack Notifier with a bot token', () => {
  it("threads one revision's messages under its first; the ending is broadcast; a new revision starts a new thread", async () => {
    receiver = current.receiver = await startNotifyReceiver();
    const problems = slackApi(receiver);
    const { runtime, store, results } = start(spec(receiver.url), {
      secret: { token: TOKEN, 'ca.crt': receiver.ca },
    });
    runtime.packageSync(ps('web', progressing(SHA1)));
    runtime.packageSync(ps('web', failedStatus(SHA1)));
    runtime.packageSync(ps('web', healthy(SHA1)));
    await until('three posts', () => results.filter((r) => r === 'delivered').length === 3);
    runtime.packageSync(ps('web', progressing(SHA2)));
    await until('the new revision', () => results.filter((r) => r === 'delivered').length === 4);
    expect(problems).toEqual([]);
    const [first, failed, resolved, next] = posted().map((r) => r.json);
    expect(first!.channel).toBe('#deploys');
    expect(tsOf(posted()[0]!)).toBeUndefined();
    // the replies name the channel by the id Slack answered, and the first message's ts
    expect([failed, resolved].map((j) => [j!.channel, j!.thread_ts, j!.reply_broadcast])).toEqual([
      ['C0123CHAN', '1700000000.000001', true],
      ['C0123CHAN', '1700000000.000001', true],
    ]);
    expect(String(failed!.text)).toContain('HealthCheckFailed');
    expect(String(resolved!.text)).toMatch(/resolved|healthy/i);
    // SHA2 is another revision: a new message in the channel, its thread remembered in place of SHA1's
    expect(next!.thread_ts).toBeUndefined();
    expect(next!.channel).toBe('#deploys');
    const stored = JSON.parse(store.text!) as { threads: Record<string, { revision: string; ts: string }> };
    expect(stored.threads.web).toMatchObject({ revision: `main@sha1:${SHA2}`, ts: '1700000000.000004' });
    expect(store.text).not.toContain(TOKEN);
  });

  it('progress replies stay in the thread (no broadcast)', async () => {
    receiver = current.receiver = await startNotifyReceiver();
    slackApi(receiver);
    const { runtime, results } = start(spec(receiver.url), { secret: { token: TOKEN, 'ca.crt': receiver.ca } });
    runtime.packageSync(ps('web', progressing(SHA1)));
    runtime.packageSync(
      ps('web', {
        lastAttemptedRevision: `main@sha1:${SHA1}`,
        conditions: [
          { type: 'Ready', status: 'Unknown', reason: 'HealthCheckPending', message: 'm', lastTransitionTime: '' },
        ],
      }),
    );
    await until('two posts', () => results.filter((r) => r === 'delivered').length === 2);
    const reply = posted()[1]!.json;
    expect(reply.thread_ts).toBe('1700000000.000001');
    expect(reply.reply_broadcast).toBeUndefined();
  });

  it('the thread survives a restart: a new runtime on the same outbox replies in it', async () => {
    receiver = current.receiver = await startNotifyReceiver();
    slackApi(receiver);
    const store = new MemoryStore();
    const secret = { token: TOKEN, 'ca.crt': receiver.ca };
    const a = start(spec(receiver.url), { store, secret });
    a.runtime.packageSync(ps('web', progressing(SHA1)));
    await until('the first post', () => a.results.includes('delivered'));
    void a.runtime.stop();
    const b = start(spec(receiver.url), { store, secret, units: [ps('web', failedStatus(SHA1))] });
    await until('the reply', () => b.results.includes('delivered'));
    expect(posted()).toHaveLength(2);
    expect(posted()[1]!.json.thread_ts).toBe('1700000000.000001');
  });

  it("retries Slack's transient errors, refuses the others for good, and says only the code", async () => {
    receiver = current.receiver = await startNotifyReceiver();
    let transient = 1;
    slackApi(receiver, (req) =>
      req.json.text.includes('a-bad') ? 'channel_not_found' : transient-- > 0 ? 'internal_error' : undefined,
    );
    const { runtime, results, conditions } = start(spec(receiver.url), {
      secret: { token: TOKEN, 'ca.crt': receiver.ca },
    });
    runtime.packageSync(ps('a-good', progressing(SHA1)));
    await until('delivered after a retry', () => results.includes('delivered'));
    expect(results.slice(0, 2)).toEqual(['retried', 'delivered']);
    runtime.packageSync(ps('a-bad', progressing(SHA1)));
    await until('refused', () => results.includes('rejected'));
    expect(JSON.stringify(conditions)).not.toContain(TOKEN);
  });

  it('without a channel the Notifier is not Ready and names the field', async () => {
    receiver = current.receiver = await startNotifyReceiver();
    const { conditions } = start(
      { type: 'slack', secretRef: { name: 's' } },
      { secret: { token: TOKEN, 'ca.crt': receiver.ca } },
    );
    const c = await until('a condition', () => conditions[0]);
    expect(c).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(c.message).toMatch(/^spec\.channel: /);
  });
});
