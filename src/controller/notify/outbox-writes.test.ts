/**
 * The outbox's writes are shared (outbox-writes.ts, a group commit): a burst of transitions is a few writes, a
 * message is sent only after a write holding it completed, and a Notifier that does not select a PackageSync
 * does nothing for it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startNotifyReceiver } from '../../../test/support/notify-receiver.ts';
import {
  current,
  healthy,
  ids,
  KEY,
  MemoryStore,
  progressing,
  ps,
  SHA1,
  start,
  stopAll,
  until,
} from '../../../test/support/notifier-runtime.ts';

afterEach(stopAll);

/** A store whose writes complete only when the test lets them, as an API server under load answers late. */
class HeldStore extends MemoryStore {
  held: (() => void)[] = [];
  texts: string[] = [];
  override async save(ref: unknown, text: string) {
    await new Promise<void>((r) => this.held.push(r));
    this.texts.push(text);
    await super.save(ref, text);
  }
  releaseAll() {
    for (const r of this.held.splice(0)) r();
  }
}

const GENERIC = { type: 'generic' as const, secretRef: { name: 's' } };

describe('the outbox written as a group commit', () => {
  it('sends nothing before a write holding the message completed', async () => {
    const receiver = (current.receiver = await startNotifyReceiver({ hmacKey: KEY }));
    const store = new HeldStore();
    const { runtime, results } = start({ ...GENERIC, address: receiver.url }, { store });
    runtime.packageSync(ps('a', progressing(SHA1)));
    await until('a write in flight', () => store.held.length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.requests).toHaveLength(0);
    store.releaseAll();
    await until('delivered', () => results.includes('delivered'));
    // the write that came first held the message
    expect(JSON.parse(store.texts[0]!).outbox.map((e: { msg: { id: string } }) => e.msg.id)).toEqual(
      ids(receiver.requests),
    );
  });

  it('a burst over ten PackageSyncs is a few writes, every message delivered once, in order per PackageSync', async () => {
    const receiver = (current.receiver = await startNotifyReceiver({ hmacKey: KEY }));
    const store = new HeldStore();
    const { runtime, results } = start({ ...GENERIC, address: receiver.url }, { store });
    const names = Array.from({ length: 10 }, (_, i) => `u${i}`);
    for (const n of names) runtime.packageSync(ps(n, progressing(SHA1)));
    for (const n of names) runtime.packageSync(ps(n, healthy(SHA1)));
    // the API server answers each write a moment later, as under load
    const answering = setInterval(() => store.releaseAll(), 50);
    try {
      await until('twenty deliveries', () => results.filter((r) => r === 'delivered').length === 20);
      await until('the outbox stored empty', () => store.text && JSON.parse(store.text).outbox.length === 0);
    } finally {
      clearInterval(answering);
    }
    // without sharing: a write per transition and one per delivery, 40. Shared: the twenty transitions are two
    // writes (the one held, then one for everything observed meanwhile) whatever the timing; each delivery's
    // removal is at most one more (fewer when deliveries outpace the store: timing decides only that part)
    expect(store.writes).toBeLessThanOrEqual(22);
    const sent = ids(receiver.requests);
    expect(new Set(sent).size).toBe(20);
    for (const n of names) {
      const mine = receiver.requests.filter((r) => r.json.data.name === n).map((r) => r.json.type);
      expect(mine).toEqual(['io.packagesync.deployment.started', 'io.packagesync.deployment.healthy']);
    }
  });

  it('a PackageSync it does not select costs no write and no send', async () => {
    const receiver = (current.receiver = await startNotifyReceiver({ hmacKey: KEY }));
    const store = new MemoryStore();
    const { runtime } = start(
      { ...GENERIC, address: receiver.url, selector: { matchLabels: { team: 'b' } } },
      { store },
    );
    await until('loaded', () => store.writes >= 0);
    const before = store.writes;
    runtime.packageSync(ps('a', progressing(SHA1)));
    await new Promise((r) => setTimeout(r, 200));
    expect(store.writes).toBe(before);
    expect(receiver.requests).toHaveLength(0);
  });
});
