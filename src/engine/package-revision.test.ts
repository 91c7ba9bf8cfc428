import { describe, expect, it } from 'vitest';
import type { PackageSync, Status } from '../api/packagesync.ts';
import type { FetchedSource } from './ports.ts';
import { packageRevision } from './package-revision.ts';

// commits on main and the package content (path revision) each holds
const commit = (c: string) => c.repeat(40);
const rev = (c: string) => `main@sha1:${commit(c)}`;
const content: Record<string, string> = { a: 'tree-A', b: 'tree-B', c: 'tree-C', d: 'tree-B', e: 'tree-B' };

const fetched = (at: string): FetchedSource => ({
  revision: rev(at),
  commit: commit(at),
  files: [],
  checkoutRoot: '/x',
  packagePath: '.',
  pathRevision: content[at],
  samePackageAt: async (other) => content[other[0]!] === content[at],
});
const ps = (status: Status): PackageSync =>
  ({ metadata: { name: 'web', namespace: 'apps' }, spec: {}, status }) as unknown as PackageSync;

describe('packageRevision', () => {
  it('a commit after a failed attempt is a new revision even when its content equals the last applied one', async () => {
    // A → B applied → C fails to render → D removes C's file (D reads as B)
    const status = { lastAppliedRevision: rev('b'), lastAttemptedRevision: rev('c') };
    expect(await packageRevision(ps(status), fetched('d'))).toBe(rev('d'));
  });

  it('a revert of the last applied commit is a new revision', async () => {
    // A applied, B applied, D = git revert B (reads as A again)
    const revert = { ...fetched('d'), samePackageAt: async (other: string) => other[0] === 'a' };
    const status = { lastAppliedRevision: rev('b'), lastAttemptedRevision: rev('b') };
    expect(await packageRevision(ps(status), revert)).toBe(rev('d'));
  });

  it('a commit touching nothing the package reads keeps the previous attempt (the monorepo rule)', async () => {
    const status = { lastAppliedRevision: rev('d'), lastAttemptedRevision: rev('d') };
    expect(await packageRevision(ps(status), fetched('e'))).toBe(rev('d'));
  });

  it('keeps a failed attempt when the new commit did not change the package (it fails the same way)', async () => {
    const status = { lastAppliedRevision: rev('b'), lastAttemptedRevision: rev('c') };
    const sameAsC = { ...fetched('e'), samePackageAt: async (other: string) => other[0] === 'c' };
    expect(await packageRevision(ps(status), sameAsC)).toBe(rev('c'));
  });

  it('never goes back to an older commit than the previous attempt', async () => {
    // D reads as B, B was applied, but C was attempted since: D, not B
    const status = { lastAppliedRevision: rev('b'), lastAttemptedRevision: rev('c') };
    const revision = await packageRevision(ps(status), fetched('d'));
    expect(revision).not.toBe(rev('b'));
  });

  it('falls back to the last applied revision when no attempt is recorded', async () => {
    expect(await packageRevision(ps({ lastAppliedRevision: rev('b') }), fetched('e'))).toBe(rev('b'));
  });

  it('another ref starts from its own revision', async () => {
    const status = { lastAppliedRevision: `v1@sha1:${commit('b')}`, lastAttemptedRevision: `v1@sha1:${commit('b')}` };
    expect(await packageRevision(ps(status), fetched('e'))).toBe(rev('e'));
  });

  it('a first run works on the fetched revision', async () => {
    expect(await packageRevision(ps({}), fetched('a'))).toBe(rev('a'));
  });
});
