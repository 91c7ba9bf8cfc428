import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../core/object.ts';
import { OwnWrites } from './own-writes.ts';

const cm = (rv: string, uid = 'u1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'a', namespace: 'n', uid, resourceVersion: rv },
});

describe('OwnWrites', () => {
  it('knows the newest resourceVersion our apply produced, and only that', () => {
    const w = new OwnWrites();
    w.record(cm('5'));
    expect(w.isOwn(cm('5'))).toBe(true);
    expect(w.isOwn(cm('6'))).toBe(false);
    w.record(cm('7'));
    expect(w.isOwn(cm('5'))).toBe(false);
  });

  it('knows when a watch has caught up with our newest write, until we write again', () => {
    const w = new OwnWrites();
    w.record(cm('5'));
    w.watched(cm('4')); // a copy from before our write: not caught up
    expect(w.caughtUp('u1')).toBe(false);
    w.watched(cm('5'));
    expect(w.caughtUp('u1')).toBe(true);
    w.watched(cm('6')); // someone's later change (a controller's status) leaves it caught up
    expect(w.caughtUp('u1')).toBe(true);
    w.record(cm('8'));
    expect(w.caughtUp('u1')).toBe(false);
  });

  it('forgets a deleted object at once: after N deletes it holds nothing of them', () => {
    const w = new OwnWrites();
    const uids = Array.from({ length: 100 }, (_, i) => `u${i}`);
    for (const uid of uids) w.record(cm('1', uid));
    w.watched(cm('1', 'u0'));
    for (const uid of uids) w.deleted(cm('2', uid));
    expect(w.size).toBe(0);
    expect(w.caughtUp('u0')).toBe(false);
    expect(w.latest('u0')).toBeUndefined();
  });

  it('forgets the oldest objects past its bound', () => {
    const w = new OwnWrites(2);
    ['a', 'b', 'c'].forEach((uid) => w.record(cm('1', uid)));
    expect(w.isOwn(cm('1', 'a'))).toBe(false);
    expect(w.isOwn(cm('1', 'c'))).toBe(true);
  });

  it('holds an event back while an apply of its object is in flight: the echo of our write is ours', async () => {
    const w = new OwnWrites();
    const done = w.begin(cm('0'));
    let own: boolean | undefined;
    const echo = w.settled(cm('9')).then(() => (own = w.isOwn(cm('9'))));
    await Promise.resolve();
    expect(own).toBeUndefined();
    w.record(cm('9'));
    done();
    await echo;
    expect(own).toBe(true);
  });
});
