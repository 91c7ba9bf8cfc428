import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fail, ok } from '../../core/failure.ts';
import { removeTree } from '../git/cache.ts';
import { createCheckoutStore } from './checkout-store.ts';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'psync-store-'));
});
afterEach(async () => {
  await removeTree(root); // checkouts are read-only
});

describe('the shared checkout store of archive sources', () => {
  it('unpacks a digest once however many ask at the same time, and hands out the same read-only tree', async () => {
    const store = createCheckoutStore({ gitCacheDir: root });
    const base = await store.base('oci://r/x', undefined);
    let fills = 0;
    const fill = async (staging: string) => {
      fills++;
      await writeFile(join(staging, 'a.yaml'), 'a: 1\n');
      return ok(undefined);
    };
    const got = await Promise.all([1, 2, 3].map(() => store.checkout(base, 'ab'.repeat(32), 'oci://r/x', fill)));
    expect(fills).toBe(1);
    const dirs = new Set(got.map((g) => (g.ok ? g.value : '')));
    expect(dirs.size).toBe(1);
    const dir = [...dirs][0]!;
    expect(await readFile(join(dir, 'a.yaml'), 'utf8')).toBe('a: 1\n');
    expect((await stat(dir)).mode & 0o222).toBe(0);
    expect((await stat(join(dir, 'a.yaml'))).mode & 0o222).toBe(0);
    // asked again later: already there
    expect(await store.checkout(base, 'ab'.repeat(32), 'oci://r/x', fill)).toEqual({ ok: true, value: dir });
    expect(fills).toBe(1);
  });

  it('a failed fill leaves no checkout and no staging tree behind', async () => {
    const store = createCheckoutStore({ gitCacheDir: root });
    const base = await store.base('https://charts/x', ['u', 'p']);
    const got = await store.checkout(base, 'cd'.repeat(32), 'https://charts/x', async (staging) => {
      await writeFile(join(staging, 'half.yaml'), 'x');
      return fail('ArtifactUnsafeEntry', 'bad entry');
    });
    expect(got).toMatchObject({ ok: false, failure: { reason: 'ArtifactUnsafeEntry' } });
    expect(await readdir(join(base, 'checkouts'))).toEqual([]);
  });

  it('keys the cache base by origin and by credentials, never by the credentials in clear', async () => {
    const store = createCheckoutStore({ gitCacheDir: root });
    const anonymous = await store.base('oci://r/x', undefined);
    const alice = await store.base('oci://r/x', ['alice', 'secret-pw']);
    const bob = await store.base('oci://r/x', ['bob', 'secret-pw']);
    expect(new Set([anonymous, alice, bob]).size).toBe(3);
    expect(await store.base('oci://r/x', ['alice', 'secret-pw'])).toBe(alice);
    expect(alice).not.toContain('secret-pw');
  });
});
