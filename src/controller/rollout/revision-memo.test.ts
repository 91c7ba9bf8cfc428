import { describe, expect, it } from 'vitest';
import type { SetRevision } from '../../engine/set-revision.ts';
import { RevisionMemo } from './revision-memo.ts';

describe('RevisionMemo: a set asks its source once per resync period', () => {
  const counting = () => {
    let asks = 0;
    return {
      ask: (revision: string) => () => {
        asks++;
        return Promise.resolve<SetRevision>({ revision });
      },
      get asks() {
        return asks;
      },
    };
  };

  it('answers passes within the period from the first ask (a rollout’s child events run no ls-remote)', async () => {
    const memo = new RevisionMemo();
    const c = counting();
    for (let t = 0; t < 60_000; t += 250)
      expect(await memo.get('ns/fleet', '1\n', t, 60_000, c.ask('main@sha1:a'))).toEqual({ revision: 'main@sha1:a' });
    expect(c.asks).toBe(1);
    // the period over: asked again, and the new answer is the one kept
    expect(await memo.get('ns/fleet', '1\n', 60_000, 60_000, c.ask('main@sha1:b'))).toEqual({
      revision: 'main@sha1:b',
    });
    expect(await memo.get('ns/fleet', '1\n', 60_001, 60_000, c.ask('main@sha1:c'))).toEqual({
      revision: 'main@sha1:b',
    });
    expect(c.asks).toBe(2);
  });

  it('asks again at once when the generation or the requested-at annotation changes', async () => {
    const memo = new RevisionMemo();
    const c = counting();
    await memo.get('ns/fleet', '1\n', 0, 60_000, c.ask('main@sha1:a'));
    expect(await memo.get('ns/fleet', '2\n', 10, 60_000, c.ask('main@sha1:b'))).toEqual({ revision: 'main@sha1:b' });
    expect(await memo.get('ns/fleet', '2\nnow', 20, 60_000, c.ask('main@sha1:c'))).toEqual({
      revision: 'main@sha1:c',
    });
    expect(c.asks).toBe(3);
  });

  it('keeps sets apart, forgets a deleted set, and does not keep an ask that threw', async () => {
    const memo = new RevisionMemo();
    const c = counting();
    await memo.get('ns/a', '1\n', 0, 60_000, c.ask('main@sha1:a'));
    expect(await memo.get('ns/b', '1\n', 0, 60_000, c.ask('main@sha1:b'))).toEqual({ revision: 'main@sha1:b' });
    memo.forget('ns/a');
    expect(await memo.get('ns/a', '1\n', 1, 60_000, c.ask('main@sha1:c'))).toEqual({ revision: 'main@sha1:c' });
    await expect(memo.get('ns/x', '1\n', 0, 60_000, () => Promise.reject(new Error('aborted')))).rejects.toThrow();
    expect(await memo.get('ns/x', '1\n', 1, 60_000, c.ask('main@sha1:d'))).toEqual({ revision: 'main@sha1:d' });
    expect(c.asks).toBe(4);
  });
});
