import { describe, expect, it } from 'vitest';
import { newestOnly } from '../../web/newest-only.ts';

/** A read whose answer the test releases by hand, in any order. */
function deferredReads() {
  const pending: Array<(v: string) => void> = [];
  let n = 0;
  const read = () => {
    const value = `answer ${++n}`;
    return new Promise<string>((resolve) => pending.push(() => resolve(value)));
  };
  return { read, release: (i: number) => pending[i]!('') };
}

describe('newestOnly: the fleet and PackageSync pages show the answer to the newest request only', () => {
  it('an older answer landing after a newer one is dropped (the previous filter never replaces the rows)', async () => {
    const { read, release } = deferredReads();
    const shown: string[] = [];
    const reads = newestOnly(
      read,
      (v) => shown.push(v),
      () => undefined,
    );
    reads.load(); // the previous filter
    reads.load(); // the filter the user chose since
    release(1);
    release(0);
    await new Promise((r) => setTimeout(r, 0));
    expect(shown).toEqual(['answer 2']);
  });

  it('nothing lands after stop (the page moved on)', async () => {
    const { read, release } = deferredReads();
    const shown: string[] = [];
    const reads = newestOnly(
      read,
      (v) => shown.push(v),
      () => undefined,
    );
    reads.load();
    reads.stop();
    release(0);
    await new Promise((r) => setTimeout(r, 0));
    expect(shown).toEqual([]);
  });
});
