import { describe, expect, it } from 'vitest';
import type { InventoryEntry } from './inventory.ts';
import { mergeInventories, sortEntries } from './inventory.ts';
import {
  chunkEntries,
  compressShard,
  decodeShard,
  encodeShard,
  planInventoryWrite,
  shouldSpill,
  type ShardOptions,
  type StoredInventory,
} from './inventory-shards.ts';

const owner = { name: 'big', uid: '0b1e4c1a-uid' };
const opts: ShardOptions = { spillAbove: 10, shardEntries: 16 };

const cm = (ns: string, name: string): InventoryEntry => ({ id: `${ns}_${name}__ConfigMap`, v: 'v1' });
const many = (n: number, from = 0): InventoryEntry[] =>
  Array.from({ length: n }, (_, i) => cm(`ns-${(from + i) % 3}`, `cm-${String(from + i).padStart(6, '0')}`));

describe('shouldSpill', () => {
  it.each([
    [0, false],
    [10, false],
    [11, true],
  ])('%i entries with a threshold of 10: %s', (n, spill) => {
    expect(shouldSpill(many(n), opts)).toBe(spill);
  });

  it('spills a short list of very long names too (status needs room for the rest)', () => {
    const long = Array.from({ length: 3000 }, (_, i) => cm('ns', `${'x'.repeat(200)}-${i}`));
    expect(shouldSpill(long, { spillAbove: 4000, shardEntries: 8192 })).toBe(true);
  });
});

describe('encodeShard / decodeShard', () => {
  const entries: InventoryEntry[] = sortEntries([
    ...many(5),
    { id: 'ns-0_web_apps_Deployment', v: 'v1' },
    { id: '_admin_rbac.authorization.k8s.io_ClusterRole', v: 'v1' },
    { id: 'ns-1_system__controller_rbac.authorization.k8s.io_Role', v: 'v1' },
    { id: 'ns-1_w_example.com_Widget', v: 'v1beta2' },
    { id: 'not-an-id', v: 'v1' },
  ]);

  it('round-trips every entry, RBAC colons and odd ids included', () => {
    const shard = encodeShard(entries, owner);
    const decoded = decodeShard(shard.ref, compressShard(shard.text), owner.uid);
    expect(decoded.ok && sortEntries(decoded.value)).toEqual(entries);
    expect(shard.ref.count).toBe(entries.length);
  });

  it('names each name once: grouped by namespace, group, kind and version', () => {
    const shard = encodeShard(many(300), owner);
    expect(shard.text.split('\n').filter(Boolean)).toHaveLength(1 + 3);
    expect(shard.text).not.toContain('ConfigMap\tv1\tcm-000000\tcm-000000');
  });

  it('is named by a digest of owner and content: same content same name, another owner another name', () => {
    const a = encodeShard(entries, owner);
    expect(encodeShard([...entries], owner).ref.name).toBe(a.ref.name);
    expect(encodeShard(entries, { ...owner, uid: 'other' }).ref.name).not.toBe(a.ref.name);
    expect(a.ref.name).toMatch(/^big\.inventory\.[0-9a-f]{16}$/);
  });

  it('refuses a shard whose content does not match the digest or count status names', () => {
    const shard = encodeShard(entries, owner);
    const other = encodeShard(many(3), owner);
    const swapped = decodeShard(shard.ref, compressShard(other.text), owner.uid);
    expect(!swapped.ok && swapped.failure.reason).toBe('InventoryUnreadable');
    expect(!swapped.ok && swapped.failure.message).toContain(shard.ref.name);
    expect(decodeShard(shard.ref, 'bm90IGd6aXA=', owner.uid).ok).toBe(false);
    expect(decodeShard(shard.ref, undefined, owner.uid).ok).toBe(false);
    expect(decodeShard({ ...shard.ref, count: 1 }, compressShard(shard.text), owner.uid).ok).toBe(false);
  });
});

describe('chunkEntries', () => {
  it('keeps every entry in order, in several shards', () => {
    const sorted = sortEntries(many(500));
    const chunks = chunkEntries(sorted, opts);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.flat()).toEqual(sorted);
  });

  it('adding one object rewrites one shard, not every shard after it', () => {
    const owned = (entries: InventoryEntry[]) =>
      new Set(chunkEntries(sortEntries(entries), opts).map((c) => encodeShard(c, owner).ref.name));
    const before = owned(many(2000));
    const after = owned([...many(2000), cm('ns-0', 'cm-000000a')]);
    const changed = [...after].filter((n) => !before.has(n));
    expect(changed).toHaveLength(1);
  });

  it('cuts a shard before its text passes the ConfigMap limit, whatever the hash says', () => {
    const long = Array.from({ length: 10_000 }, (_, i) => cm('ns', `${'n'.repeat(240)}-${i}`));
    const chunks = chunkEntries(long, { spillAbove: 0, shardEntries: 1 << 30 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(encodeShard(c, owner).text.length).toBeLessThan(700 * 1024);
  });
});

describe('planInventoryWrite', () => {
  it('keeps a small inventory inline, in the order given, and lets go of shards named before', () => {
    const entries = many(10);
    const write = planInventoryWrite(
      { entries: [], shards: [{ name: 'x', digest: 'd', count: 11 }] },
      entries,
      owner,
      opts,
    );
    expect(write.inventory).toEqual({ entries });
    expect(write.create).toEqual([]);
    expect(write.removeAfter).toEqual(['x']);
  });

  it('spills a big one: status names the shards and the count, and only new shards are created', () => {
    const first = planInventoryWrite(undefined, many(200), owner, opts);
    expect(first.inventory.entries).toEqual([]);
    expect(first.inventory.count).toBe(200);
    expect(first.create.map((s) => s.ref)).toEqual(first.inventory.shards);
    const again = planInventoryWrite(first.inventory, many(200), owner, opts);
    expect(again.create).toEqual([]);
    expect(again.removeAfter).toEqual([]);
  });
});

/**
 * Crash points: a save is create shards → write status → delete old shards. A model of the cluster (shards
 * by name, the status) is stopped after every step; at each stop the status must name only shards that exist
 * and list every object that may exist (old ∪ new while applying, invariant 2).
 */
describe('a save interrupted at any step', () => {
  interface Cluster {
    shards: Map<string, string>;
    status: StoredInventory | undefined;
  }
  type Step = (c: Cluster) => void;

  function stepsOf(c: Cluster, entries: InventoryEntry[]): Step[] {
    const write = planInventoryWrite(c.status, entries, owner, opts);
    return [
      ...write.create.map((s) => (m: Cluster) => void m.shards.set(s.ref.name, compressShard(s.text))),
      (m: Cluster) => void (m.status = write.inventory),
      ...write.removeAfter.map((name) => (m: Cluster) => void m.shards.delete(name)),
    ];
  }

  function read(c: Cluster): InventoryEntry[] {
    if (!c.status?.shards) return c.status?.entries ?? [];
    return c.status.shards.flatMap((ref) => {
      const decoded = decodeShard(ref, c.shards.get(ref.name), owner.uid);
      if (!decoded.ok) throw new Error(decoded.failure.message);
      return decoded.value;
    });
  }

  const ids = (e: InventoryEntry[]) => new Set(e.map((x) => x.id));

  it.each([
    ['inline → spilled', many(8), many(300)],
    ['spilled → spilled, half pruned', many(300), many(150)],
    ['spilled → spilled, some added', many(300), many(340)],
    ['spilled → inline', many(300), many(4)],
  ])('%s: every crash point leaves a readable inventory ⊇ old ∪ new until the prune is saved', (_, old, next) => {
    // a cluster holding the old inventory, saved the same way
    const cluster: Cluster = { shards: new Map(), status: undefined };
    for (const step of stepsOf(cluster, old)) step(cluster);
    const during = mergeInventories(old, next);
    const applying = stepsOf(cluster, during);
    for (let crash = 0; crash <= applying.length; crash++) {
      const copy: Cluster = { shards: new Map(cluster.shards), status: cluster.status };
      for (const step of applying.slice(0, crash)) step(copy);
      const listed = ids(read(copy));
      for (const e of old) expect(listed.has(e.id)).toBe(true);
      if (crash > applying.length - 1 - planInventoryWrite(cluster.status, during, owner, opts).removeAfter.length)
        for (const e of next) expect(listed.has(e.id)).toBe(true);
    }
    for (const step of applying) step(cluster);
    // the applies ran; now the prune's save: whatever point it stops at, the status is readable and ⊇ new
    const pruned = stepsOf(cluster, next);
    for (let crash = 0; crash <= pruned.length; crash++) {
      const copy: Cluster = { shards: new Map(cluster.shards), status: cluster.status };
      for (const step of pruned.slice(0, crash)) step(copy);
      const listed = ids(read(copy));
      for (const e of next) expect(listed.has(e.id)).toBe(true);
    }
    for (const step of pruned) step(cluster);
    expect(ids(read(cluster))).toEqual(ids(next));
    // nothing left behind: exactly the shards status names
    expect([...cluster.shards.keys()].sort()).toEqual((cluster.status?.shards ?? []).map((s) => s.name).sort());
  });
});
