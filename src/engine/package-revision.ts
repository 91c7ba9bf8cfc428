/**
 * Monorepos: which revision a run works on. A new commit that touches nothing the package reads (spec.path and
 * the kustomize bases it reaches: FetchedSource.pathRevision) leaves the package as it was applied, so the run
 * keeps the last applied revision: nothing is re-applied, no status is written, and status goes on naming the
 * commit that last changed the package, as a Flux Kustomization fed by an ArtifactGenerator keeps the
 * artifact's revision until the content changes. Drift is still corrected on every interval: the plan against
 * live state runs as for any revision (docs/adr/0026-remote-clusters-and-monorepo-checkouts.md).
 */
import type { PackageSync } from '../api/packagesync.ts';
import type { FetchedSource } from './ports.ts';

export async function packageRevision(ps: PackageSync, source: FetchedSource): Promise<string> {
  const applied = ps.status?.lastAppliedRevision;
  if (!applied || applied === source.revision || !source.samePackageAt) return source.revision;
  // the same ref (branch main, tag v1…): a spec that now follows another ref starts from its own revision
  if (refLabel(applied) !== refLabel(source.revision)) return source.revision;
  const commit = /(?:^|@)sha1:([0-9a-f]{40,64})$/.exec(applied)?.[1];
  if (!commit) return source.revision;
  return (await source.samePackageAt(commit)) ? applied : source.revision;
}

/** `main` of `main@sha1:…`; '' for a pinned `sha1:…`. */
const refLabel = (revision: string) => (revision.includes('@') ? revision.slice(0, revision.lastIndexOf('@')) : '');
