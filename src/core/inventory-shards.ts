/**
 * An inventory too big for one object (docs/adr/0027-inventory-spills-into-shards.md).
 *
 * Up to `spillAbove` entries the inventory stays in status.inventory.entries, in Flux's format, as before.
 * Past it, the entries go into immutable shards: ConfigMaps in the PackageSync's namespace, owned by it, named
 * from a digest of their content. status.inventory then names them ({name, digest, count}) and its entries
 * list is empty. A shard's content never changes once written, so a reader caches it by name for good.
 *
 * Shard boundaries are content-defined: the sorted entries are cut after an entry whose id hashes to a
 * boundary value, so adding or removing a few objects rewrites the shard they fall in, not every shard
 * after them (a cut every N entries would shift all later shards by one).
 *
 * The write order keeps invariant 2 (old ∪ new survives a crash at any instant): the shards a new status
 * names are created before that status is written, and shards it no longer names are deleted only after.
 * `planInventoryWrite` decides the three steps; the adapter (adapters/kube/inventory-shards.ts) runs them.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { InventoryEntry, ShardRef } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import { fail, ok, type Result } from './failure.ts';
import { sortEntries } from './inventory.ts';

export type { ShardRef };

export interface ShardOptions {
  /** More entries than this spill into shards. */
  spillAbove: number;
  /** The average number of entries per shard (rounded down to a power of two). */
  shardEntries: number;
}

/**
 * 4,000 entries of ~60 bytes is ~240 KiB in status: far below etcd's 1.5 MiB, and about where Config Sync
 * (5,000) starts warning. Everything the project tested before keeps Flux's format.
 */
export const DEFAULT_SHARD_OPTIONS: ShardOptions = { spillAbove: 4000, shardEntries: 8192 };

/** Status stays inline only below this size too (long names): the rest of status needs room. */
const MAX_INLINE_BYTES = 512 * 1024;
/** A shard's text is cut before it passes this: compressed or not, it stays under a ConfigMap's 1 MiB. */
const MAX_SHARD_TEXT_BYTES = 600 * 1024;
const FORMAT = 'packagesync.io/inventory-shard/v1';
export const SHARD_DATA_KEY = 'entries.gz';

/** The inventory as stored in status. */
export interface StoredInventory {
  entries: InventoryEntry[];
  shards?: ShardRef[];
  count?: number;
}

export interface EncodedShard {
  ref: ShardRef;
  entries: InventoryEntry[];
  /** The shard's text, as the digest covers it; gzip it for the ConfigMap (`compressShard`). */
  text: string;
}

export interface InventoryWrite {
  /** What status.inventory becomes. */
  inventory: StoredInventory;
  /** Shards to create before the status write (those the previous status did not name). */
  create: EncodedShard[];
  /** Every shard the new status names (a retry after a conflict makes sure each exists). */
  shards: EncodedShard[];
  /** Shards to delete once the status write succeeded (named before, no longer named). */
  removeAfter: string[];
}

const entryBytes = (e: InventoryEntry) => e.id.length + e.v.length + 16;

export function shouldSpill(entries: readonly InventoryEntry[], opts: ShardOptions): boolean {
  if (entries.length > opts.spillAbove) return true;
  let bytes = 0;
  for (const e of entries) bytes += entryBytes(e);
  return bytes > MAX_INLINE_BYTES;
}

/** The shard a PackageSync's inventory chunk is stored in: `<owner>.inventory.<digest>` (a DNS subdomain). */
export function shardName(owner: string, digest: string): string {
  return `${owner.slice(0, 200)}.inventory.${digest.slice(0, 16)}`;
}

/**
 * The steps of one inventory save: what status.inventory becomes, which shards must exist first, and which
 * may go after. `ownerUid` goes into every digest, so a PackageSync deleted and created again under the same
 * name never meets a shard of its predecessor (the garbage collector may not have removed it yet).
 */
export function planInventoryWrite(
  previous: StoredInventory | undefined,
  entries: readonly InventoryEntry[],
  owner: { name: string; uid: string },
  opts: ShardOptions,
): InventoryWrite {
  const before = new Set((previous?.shards ?? []).map((s) => s.name));
  if (!shouldSpill(entries, opts)) {
    return { inventory: { entries: [...entries] }, create: [], shards: [], removeAfter: [...before] };
  }
  const shards = chunkEntries(sortEntries(entries), opts).map((chunk) => encodeShard(chunk, owner));
  const after = new Set(shards.map((s) => s.ref.name));
  return {
    inventory: { entries: [], shards: shards.map((s) => s.ref), count: entries.length },
    create: shards.filter((s) => !before.has(s.ref.name)),
    shards,
    removeAfter: [...before].filter((n) => !after.has(n)),
  };
}

/** Content-defined cuts over sorted entries (see the file comment). */
export function chunkEntries(sorted: readonly InventoryEntry[], opts: ShardOptions): InventoryEntry[][] {
  const mask = 2 ** Math.max(0, Math.floor(Math.log2(Math.max(1, opts.shardEntries)))) - 1;
  const chunks: InventoryEntry[][] = [];
  let chunk: InventoryEntry[] = [];
  let bytes = 0;
  for (const e of sorted) {
    if (chunk.length > 0 && bytes + entryBytes(e) > MAX_SHARD_TEXT_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(e);
    bytes += entryBytes(e);
    if ((fnv1a(e.id) & mask) === mask) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/**
 * A shard's text: a header line, then one line per namespace, group, kind and version, listing names
 * (the `<name>` part of the ids, RBAC colons transcoded as in the id). Grouping leaves each name once.
 */
export function encodeShard(entries: readonly InventoryEntry[], owner: { name: string; uid: string }): EncodedShard {
  const groups = new Map<string, string[]>();
  const odd: string[] = [];
  for (const e of entries) {
    const parts = splitId(e.id);
    if (!parts) {
      odd.push(`!${e.v}\t${e.id}`);
      continue;
    }
    const key = `${parts.namespace}\t${parts.group}\t${parts.kind}\t${e.v}`;
    const names = groups.get(key);
    if (names) names.push(parts.name);
    else groups.set(key, [parts.name]);
  }
  const lines = [FORMAT, ...[...groups].map(([key, names]) => `${key}\t${names.join('\t')}`), ...odd];
  const text = `${lines.join('\n')}\n`;
  const digest = digestOf(owner.uid, text);
  return { ref: { name: shardName(owner.name, digest), digest, count: entries.length }, entries: [...entries], text };
}

export function compressShard(text: string): string {
  return gzipSync(Buffer.from(text, 'utf8')).toString('base64');
}

/** Decodes a shard's ConfigMap data and checks it against the digest and count status names it by. */
export function decodeShard(ref: ShardRef, base64: string | undefined, ownerUid: string): Result<InventoryEntry[]> {
  let text: string;
  try {
    if (base64 === undefined) throw new Error('no data');
    text = gunzipSync(Buffer.from(base64, 'base64')).toString('utf8');
  } catch {
    return unreadable(ref, 'is not a gzip-compressed inventory shard');
  }
  if (digestOf(ownerUid, text) !== ref.digest) return unreadable(ref, 'does not match the digest status names');
  const lines = text.split('\n');
  if (lines[0] !== FORMAT) return unreadable(ref, `is not in format ${FORMAT}`);
  const entries: InventoryEntry[] = [];
  for (const line of lines.slice(1)) {
    if (!line) continue;
    if (line.startsWith('!')) {
      const tab = line.indexOf('\t');
      entries.push({ id: line.slice(tab + 1), v: line.slice(1, tab) });
      continue;
    }
    const [namespace, group, kind, v, ...names] = line.split('\t');
    for (const name of names) entries.push({ id: `${namespace}_${name}_${group}_${kind}`, v: v! });
  }
  if (entries.length !== ref.count) return unreadable(ref, `lists ${entries.length} objects, status says ${ref.count}`);
  return ok(entries);
}

export function inventoryUnreadable(namespace: string, name: string, why: string): Result<never> {
  return fail(
    Reason.InventoryUnreadable,
    `the inventory of PackageSync ${namespace}/${name} cannot be read: ${why}; nothing is applied or pruned ` +
      'until it can (restore the ConfigMap, or delete status.inventory to start over: objects no longer in the ' +
      'package are then left in the cluster)',
  );
}

function unreadable(ref: ShardRef, why: string): Result<never> {
  return fail(Reason.InventoryUnreadable, `inventory shard ConfigMap ${ref.name} ${why}`);
}

function digestOf(uid: string, text: string): string {
  return createHash('sha256').update(uid).update('\n').update(text).digest('hex');
}

/** `<namespace>_<name>_<group>_<kind>` split as cli-utils does (namespace first, group and kind from the end). */
function splitId(id: string): { namespace: string; name: string; group: string; kind: string } | undefined {
  if (id.includes('\t') || id.includes('\n')) return undefined;
  const first = id.indexOf('_');
  const last = id.lastIndexOf('_');
  const beforeLast = last > first ? id.lastIndexOf('_', last - 1) : -1;
  if (first < 0 || beforeLast <= first) return undefined;
  return {
    namespace: id.slice(0, first),
    name: id.slice(first + 1, beforeLast),
    group: id.slice(beforeLast + 1, last),
    kind: id.slice(last + 1),
  };
}

/** 32-bit FNV-1a: a cheap, stable hash for the shard cuts (not for integrity: that is the sha256 digest). */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
