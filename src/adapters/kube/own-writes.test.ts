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
    expect(w.trustsCopy('u1', '0')).toBe(false);
    for (const uid of uids) w.deleted(cm('2', uid));
    expect(w.size).toBe(0);
    expect(w.caughtUp('u0')).toBe(false);
    // nothing remembered: a copy of that uid is not held back as lagging behind our write (it was before)
    expect(w.trustsCopy('u1', '0')).toBe(true);
  });

  it.each([
    // [what, writes recorded, watch copies delivered, API server agreed, copy's rv, trusted]
    ['no write remembered', [], [], false, '4', true],
    ['a copy without a uid', ['5'], [], false, undefined, true],
    ['the copy is our newest write', ['5'], [], false, '5', true],
    ['the copy lags behind our write', ['5'], [], false, '4', false],
    ['the copy is an older write of ours', ['5', '7'], [], false, '5', false],
    ['the watch delivered our write, the copy is newer', ['5'], ['5'], false, '6', true],
    ['the watch delivered only a copy before our write', ['5'], ['4'], false, '4', false],
    ['a read agreed with the watch after our write', ['5'], [], true, '6', true],
    ['we wrote again after the watch caught up', ['5', '8'], ['5'], false, '6', false],
  ] as const)('trustsCopy: %s → %s', (_what, writes, delivered, agreed, rv, trusted) => {
    const w = new OwnWrites();
    writes.forEach((v, i) => {
      w.record(cm(v));
      if (i === 0) delivered.forEach((d) => w.watched(cm(d)));
    });
    if (agreed) w.confirmed('u1');
    expect(w.trustsCopy(rv === undefined ? undefined : 'u1', rv)).toBe(trusted);
  });

  it('forgets the oldest objects past its bound', () => {
    const w = new OwnWrites(2);
    ['a', 'b', 'c'].forEach((uid) => w.record(cm('1', uid)));
    expect(w.isOwn(cm('1', 'a'))).toBe(false);
    expect(w.isOwn(cm('1', 'c'))).toBe(true);
    expect(w.trustsCopy('a', '0')).toBe(true); // forgotten: the watch is trusted again
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

describe('OwnWrites: our own deletes', () => {
  const obj = (uid: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'n', uid } });
  it('a delete event of a uid we deleted is ours, once; a failed delete is not', () => {
    const w = new OwnWrites();
    w.deleting('u1');
    expect(w.deletedByUs(obj('u2'))).toBe(false);
    expect(w.deletedByUs(obj('u1'))).toBe(true);
    expect(w.deletedByUs(obj('u1'))).toBe(false);
    w.deleting('u3');
    w.notDeleting('u3');
    expect(w.deletedByUs(obj('u3'))).toBe(false);
  });
});
