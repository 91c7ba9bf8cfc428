/**
 * A Notifier at work against a loopback HTTPS receiver: CloudEvents signed and in order, retries with back-off and
 * Retry-After, a rate limit, refusals, a restart mid-delivery (delivered once it is back). Commit statuses and pull
 * request comments against each forge's documented API: forge-notifiers.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startNotifyReceiver, type NotifyReceiver } from '../../../test/support/notify-receiver.ts';
import {
  current,
  failedStatus,
  healthy,
  ids,
  KEY,
  MemoryStore,
  progressing,
  ps,
  SHA1,
  SHA2,
  start,
  stopAll,
  until,
} from '../../../test/support/notifier-runtime.ts';

let receiver: NotifyReceiver;
afterEach(stopAll);

describe('a generic webhook Notifier', () => {
  it('sends each record phase once, as signed CloudEvents, in order, and empties its outbox', async () => {
    receiver = current.receiver = await startNotifyReceiver({ hmacKey: KEY });
    const { runtime, store, results } = start({
      type: 'generic',
      address: `${receiver.url}/in`,
      secretRef: { name: 's' },
    });
    runtime.packageSync(ps('web', progressing(SHA1)));
    runtime.packageSync(ps('web', healthy(SHA1)));
    runtime.packageSync(ps('web', healthy(SHA1)));
    await until('two deliveries', () => results.filter((r) => r === 'delivered').length === 2);
    expect(receiver.requests.map((r) => r.json.type)).toEqual([
      'io.packagesync.deployment.started',
      'io.packagesync.deployment.healthy',
    ]);
    expect(receiver.requests.every((r) => r.signatureValid)).toBe(true);
    expect(
      receiver.requests.every(
        (r) => r.path === '/in' && r.headers['content-type'] === 'application/cloudevents+json; charset=utf-8',
      ),
    ).toBe(true);
    expect(JSON.parse(store.text!).outbox).toEqual([]);
    expect(runtime.stats.depth).toBe(0);
  });

  it('retries a 500 with back-off and keeps the order: nothing overtakes the message being retried', async () => {
    receiver = current.receiver = await startNotifyReceiver({ hmacKey: KEY });
    let failures = 2;
    receiver.answer = () => (failures-- > 0 ? { status: 500 } : { status: 202 });
    const { runtime, results } = start({ type: 'generic', address: receiver.url, secretRef: { name: 's' } });
    runtime.packageSync(ps('a', progressing(SHA1)));
    runtime.packageSync(ps('b', progressing(SHA1)));
    runtime.packageSync(ps('a', healthy(SHA1)));
    await until('three deliveries', () => results.filter((r) => r === 'delivered').length === 3);
    const sent = ids(receiver.requests);
    expect(sent).toEqual([sent[0], sent[0], sent[0], `uid-b/main@sha1:${SHA1}#1`, `uid-a/main@sha1:${SHA1}#2`]);
    expect(results.filter((r) => r === 'retried')).toHaveLength(2);
    // back-off: at least 0.8 s, then 1.6 s (jitter 0 here) between the attempts
    const at = receiver.requests.map((r) => r.at);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(750);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(1550);
  });

  it('honours Retry-After on 429', async () => {
    receiver = current.receiver = await startNotifyReceiver({ hmacKey: KEY });
    let first = true;
    receiver.answer = () =>
      first ? ((first = false), { status: 429, headers: { 'retry-after': '2' } }) : { status: 200 };
    const { runtime, results } = start({ type: 'generic', address: receiver.url, secretRef: { name: 's' } });
    runtime.packageSync(ps('a', failedStatus(SHA1)));
    await until('delivered', () => results.includes('delivered'));
    expect(receiver.requests[1]!.at - receiver.requests[0]!.at).toBeGreaterThanOrEqual(1950);
  });

  it('drops a message the receiver refuses for good (404) and goes on with the next', async () => {
    receiver = current.receiver = await startNotifyReceiver({ hmacKey: KEY });
    receiver.answer = (r) => (r.json.type.endsWith('started') ? { status: 404 } : { status: 200 });
    const { runtime, results } = start({ type: 'generic', address: receiver.url, secretRef: { name: 's' } });
    runtime.packageSync(ps('a', progressing(SHA1)));
    runtime.packageSync(ps('a', healthy(SHA1)));
    await until('delivered', () => results.includes('delivered'));
    expect(results).toEqual(['rejected', 'delivered']);
    expect(receiver.requests).toHaveLength(2);
  });

  it('a restart mid-delivery (the answer lost) sends the message again with the same id: one 2xx per id', async () => {
    receiver = current.receiver = await startNotifyReceiver({ hmacKey: KEY });
    receiver.answer = () => 'hang';
    const store = new MemoryStore();
    const first = start({ type: 'generic', address: receiver.url, secretRef: { name: 's' } }, { store });
    first.runtime.packageSync(ps('a', failedStatus(SHA1)));
    await until('the first attempt in flight', () => receiver!.requests.length === 1);
    void first.runtime.stop(); // the process dies: what it wrote to the store is all that is left
    receiver.release(true);
    receiver.answer = () => ({ status: 200 });
    // the new leader sees the same status: the record is in the store, nothing new to record
    const second = start(
      { type: 'generic', address: receiver.url, secretRef: { name: 's' } },
      { store, units: [ps('a', failedStatus(SHA1))] },
    );
    await until('delivered after the restart', () => second.results.includes('delivered'));
    const answered = receiver.requests.filter((r) => r.answered === 200);
    expect(answered).toHaveLength(1);
    expect(new Set(ids(receiver.requests))).toEqual(new Set([`uid-a/main@sha1:${SHA1}#1`]));
  });

  it('stop() resolves once the outbox write under way has landed, and nothing is sent after it', async () => {
    // a leader handing its Lease over stops its Notifiers first: no write of its own may land after that
    receiver = current.receiver = await startNotifyReceiver({ hmacKey: KEY });
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    class SlowStore extends MemoryStore {
      saving = false;
      override async save(ref: unknown, text: string) {
        this.saving = true;
        await gate;
        await super.save(ref, text);
      }
    }
    const store = new SlowStore();
    const { runtime } = start({ type: 'generic', address: receiver.url, secretRef: { name: 's' } }, { store });
    runtime.packageSync(ps('a', failedStatus(SHA1)));
    await until('the outbox write under way', () => store.saving);
    let stopped = false;
    const stopping = runtime.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(stopped).toBe(false);
    open();
    await stopping;
    expect(JSON.parse(store.text!).outbox.map((e: { msg: { id: string } }) => e.msg.id)).toEqual([
      `uid-a/main@sha1:${SHA1}#1`,
    ]);
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.requests).toEqual([]);
  });

  it('a receiver that hangs is given up on after the timeout and retried', async () => {
    receiver = current.receiver = await startNotifyReceiver({ hmacKey: KEY });
    let hang = true;
    receiver.answer = () => (hang ? ((hang = false), 'hang') : { status: 200 });
    const { runtime, results } = start(
      { type: 'generic', address: receiver.url, secretRef: { name: 's' } },
      { timeoutMs: 300 },
    );
    runtime.packageSync(ps('a', failedStatus(SHA1)));
    await until('delivered', () => results.includes('delivered'));
    expect(results).toEqual(['retried', 'delivered']);
  });

  it('says what is wrong with its configuration and sends nothing until it is fixed', async () => {
    receiver = current.receiver = await startNotifyReceiver();
    const { runtime, conditions } = start({ type: 'generic', address: 'http://127.0.0.1:1/x' }, { secret: {} });
    runtime.packageSync(ps('a', failedStatus(SHA1)));
    await until('a condition', () => conditions.length > 0);
    await until('the message kept', () => runtime.stats.depth === 1);
    expect(conditions[0]).toEqual({
      status: 'False',
      reason: 'InvalidSpec',
      message: 'spec.address must be an https:// URL',
    });
  });
});

describe('a Slack Notifier', () => {
  it('is rate limited to one message a second and sends failures once, then resolved', async () => {
    receiver = current.receiver = await startNotifyReceiver();
    const { runtime, results } = start(
      { type: 'slack', secretRef: { name: 's' } },
      { secret: { address: `${receiver.url}/services/T/B/X`, 'ca.crt': receiver.ca } },
    );
    runtime.packageSync(ps('a', healthy(SHA1)));
    runtime.packageSync(ps('a', progressing(SHA2)));
    runtime.packageSync(ps('a', failedStatus(SHA2)));
    runtime.packageSync(ps('a', progressing(SHA2)));
    runtime.packageSync(ps('a', failedStatus(SHA2)));
    runtime.packageSync(ps('b', failedStatus(SHA1)));
    runtime.packageSync(ps('a', healthy(SHA2)));
    await until('three deliveries', () => results.filter((r) => r === 'delivered').length === 3);
    expect(receiver.requests.map((r) => r.json.text.split(':')[0])).toEqual([
      'team-a/a failed',
      'team-a/b failed',
      'team-a/a resolved',
    ]);
    const at = receiver.requests.map((r) => r.at);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(900);
  });
});
