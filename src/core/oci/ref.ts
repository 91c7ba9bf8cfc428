import semver from 'semver';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';
import { isDigest, isTag } from './reference.ts';

/**
 * Which version of an OCI artifact a PackageSync follows (spec.source.oci.ref), as Flux's OCIRepository
 * `ref`: a tag, the highest tag in a semver range, or a digest; none means the tag `latest`. A tag together
 * with a digest pins the tag: if the tag now names another manifest the reconcile stops (ArtifactTagMoved)
 * instead of following it (Flux ignores the tag then; see ADR 0024).
 */
export type OciRef =
  | { kind: 'tag'; tag: string; digest?: string }
  | { kind: 'semver'; range: string }
  | { kind: 'digest'; digest: string };

export interface OciRefSpec {
  tag?: string | undefined;
  semver?: string | undefined;
  digest?: string | undefined;
}

const invalid = (why: string) => fail<never>(Reason.InvalidRef, `spec.source.oci.ref ${why}`, { terminal: true });

export function validateOciRef(ref: OciRefSpec | undefined): Result<OciRef> {
  const { tag, semver: range, digest } = ref ?? {};
  if (range !== undefined && (tag !== undefined || digest !== undefined)) {
    return invalid('sets semver together with tag or digest: set one of tag, semver, digest (tag may go with digest)');
  }
  if (tag !== undefined && !isTag(tag)) return invalid(`tag ${JSON.stringify(tag.slice(0, 130))} is not a valid tag`);
  if (digest !== undefined && !isDigest(digest)) {
    return invalid(`digest ${JSON.stringify(digest.slice(0, 80))} is not sha256:<64 lower-case hex>`);
  }
  if (range !== undefined) {
    if (semver.validRange(range) === null)
      return invalid(`semver ${JSON.stringify(range.slice(0, 80))} is not a semver range`);
    return ok({ kind: 'semver', range });
  }
  if (tag !== undefined) return ok({ kind: 'tag', tag, ...(digest !== undefined ? { digest } : {}) });
  if (digest !== undefined) return ok({ kind: 'digest', digest });
  return ok({ kind: 'tag', tag: 'latest' });
}

/**
 * The highest tag satisfying the range, as Flux chooses for `semver`: tags that are not semver are ignored,
 * a leading `v` is accepted, pre-releases match only when the range names one.
 */
export function chooseSemverTag(tags: readonly string[], range: string): string | undefined {
  let best: { tag: string; version: semver.SemVer } | undefined;
  for (const tag of tags) {
    const version = semver.parse(tag.replace(/^v/, ''), { loose: false });
    if (!version || !semver.satisfies(version, range)) continue;
    if (!best || semver.gt(version, best.version)) best = { tag, version };
  }
  return best?.tag;
}

/** How the revision reads in status, as Flux writes it: `<tag>@sha256:<hex>`, or `sha256:<hex>` when pinned by digest. */
export function formatOciRevision(tag: string | undefined, digest: string): string {
  return tag === undefined ? digest : `${tag}@${digest}`;
}
