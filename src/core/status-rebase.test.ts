import { describe, expect, it } from 'vitest';
import type { Status } from '../api/packagesync.ts';
import { rebaseStatus } from './status-rebase.ts';

const entry = (id: string, v = 'v1') => ({ id, v });
const withInventory = (ids: string[], extra: Partial<Status> = {}): Status => ({
  ...extra,
  inventory: { entries: ids.map((id) => entry(id)) },
});

describe('rebaseStatus', () => {
  it('writes ours unchanged when only metadata or spec changed (status as we last saw it)', () => {
    const base = withInventory(['a'], { lastAppliedRevision: 'main@sha1:1', observedGeneration: 1 });
    // same content, keys in another order, as the API server may return them
    const theirs = {
      observedGeneration: 1,
      inventory: { entries: [{ v: 'v1', id: 'a' }] },
      lastAppliedRevision: 'main@sha1:1',
    };
    const ours = withInventory(['b']);
    expect(rebaseStatus(ours, base, theirs)).toBe(ours);
  });

  it('keeps every inventory entry another writer added, so no applied object becomes unknown', () => {
    const base = withInventory(['a']);
    const theirs = withInventory(['a', 'b', 'c']); // e.g. a late write of old ∪ new from an earlier run
    const ours = withInventory(['a', 'd'], { lastAppliedRevision: 'main@sha1:2' });
    const next = rebaseStatus(ours, base, theirs);
    expect(next.inventory?.entries.map((e) => e.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(next.lastAppliedRevision).toBe('main@sha1:2');
  });

  it('keeps our version of an entry both list', () => {
    const next = rebaseStatus({ inventory: { entries: [entry('a', 'v2')] } }, undefined, {
      inventory: { entries: [entry('a', 'v1')] },
    });
    expect(next.inventory?.entries).toEqual([entry('a', 'v2')]);
  });

  it('writes ours when the other writer left no inventory', () => {
    const ours = withInventory(['a']);
    expect(rebaseStatus(ours, withInventory(['x']), { observedGeneration: 3 })).toBe(ours);
  });
});
