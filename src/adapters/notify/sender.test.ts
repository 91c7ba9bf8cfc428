import { afterEach, describe, expect, it } from 'vitest';
import { startNotifyReceiver, type NotifyReceiver } from '../../../test/support/notify-receiver.ts';
import { hostOf, retryAfter, Sender } from './sender.ts';

const receivers: NotifyReceiver[] = [];
const senders: Sender[] = [];
afterEach(async () => {
  for (const s of senders.splice(0)) await s.close();
  for (const r of receivers.splice(0)) await r.close();
});

async function receiver() {
  const r = await startNotifyReceiver();
  receivers.push(r);
  return r;
}
function sender(timeoutMs = 5_000) {
  const s = new Sender({ timeoutMs });
  senders.push(s);
  return s;
}
const post = (url: string) => ({
  method: 'POST' as const,
  url,
  headers: { authorization: 'token t0ken-value' },
  body: '{}',
});

describe('the notification sender', () => {
  it('follows no redirect: a token must never be carried to wherever a receiver points', async () => {
    const [first, elsewhere] = [await receiver(), await receiver()];
    first.answer = () => ({ status: 307, headers: { location: `${elsewhere.url}/stolen` } });
    const res = await sender().send(post(`${first.url}/hook`), { ca: first.ca });
    expect(res).toEqual({ outcome: 'rejected', status: 307, error: `POST to ${hostOf(first.url)}: HTTP 307` });
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('trusts only the CA it is given for a private receiver', async () => {
    const r = await receiver();
    const res = await sender().send(post(`${r.url}/hook`));
    expect(res.outcome).toBe('retry');
    expect(r.requests).toHaveLength(0);
    expect((await sender().send(post(`${r.url}/hook`), { ca: r.ca })).outcome).toBe('delivered');
  });

  it('says what failed with the host only: never the path (a webhook URL is a credential) or the body', async () => {
    const r = await receiver();
    r.answer = () => ({ status: 500, body: 'echo: t0ken-value' });
    const res = await sender().send(post(`${r.url}/services/T/B/SECRETPATH`), { ca: r.ca });
    expect(res).toMatchObject({ outcome: 'retry', status: 500 });
    expect(JSON.stringify(res)).not.toMatch(/SECRETPATH|t0ken/);
  });

  it('Retry-After in seconds or as a date, at most an hour', () => {
    expect(retryAfter('3')).toBe(3000);
    expect(retryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfter('86400')).toBe(3_600_000);
    expect(retryAfter('soon')).toBeUndefined();
    expect(retryAfter(undefined)).toBeUndefined();
  });
});
