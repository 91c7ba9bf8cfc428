/**
 * Monorepos: which revision a run works on. A new commit that touches nothing the package reads (spec.path and
 * the kustomize bases it reaches: FetchedSource.pathRevision) leaves the package as the previous run found it, so
 * the run keeps that run's revision: nothing is re-applied, no status is written, and status goes on naming the
 * commit that last changed the package, as a Flux Kustomization fed by an ArtifactGenerator keeps the artifact's
 * revision until the content changes. Drift is still corrected on every interval: the plan against live state
 * runs as for any revision (docs/adr/0026-remote-clusters-and-monorepo-checkouts.md).
 *
 * "The previous run" is the last *attempted* revision, not the last applied one: after A applied, C failed to
 * render and D reverted C (D's package reads exactly as A's), D changed the package relative to C, so D is the
 * revision. Comparing with the last applied revision would report A again, and a pipeline waiting for
 * lastAppliedRevision to name the commit it pushed (a `git revert` is the usual rollback) would wait for ever
 * (issue 26). So lastAttemptedRevision never goes back to a commit older than the previous attempt.
 */
import type { PackageSync } from '../api/packagesync.ts';
import type { FetchedSource } from './ports.ts';

export async function packageRevision(ps: PackageSync, source: FetchedSource): Promise<string> {
  const previous = ps.status?.lastAttemptedRevision ?? ps.status?.lastAppliedRevision;
  if (!previous || previous === source.revision || !source.samePackageAt) return source.revision;
  // the same ref (branch main, tag v1…): a spec that now follows another ref starts from its own revision
  if (refLabel(previous) !== refLabel(source.revision)) return source.revision;
  const commit = /(?:^|@)sha1:([0-9a-f]{40,64})$/.exec(previous)?.[1];
  if (!commit) return source.revision;
  return (await source.samePackageAt(commit)) ? previous : source.revision;
}

/** `main` of `main@sha1:…`; '' for a pinned `sha1:…`. */
const refLabel = (revision: string) => (revision.includes('@') ? revision.slice(0, revision.lastIndexOf('@')) : '');
