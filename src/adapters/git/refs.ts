import semver from 'semver';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import type { SourceRef } from './validate.ts';

/**
 * Pure half of ref resolution: what to ask `git ls-remote` for, and how to pick a commit from its answer.
 * Revisions follow Flux's format: `main@sha1:<id>`, `v1.2.0@sha1:<id>`, `sha1:<id>` for a pinned commit.
 */

export interface ResolvedRef {
  commit: string;
  /** Branch or tag name the commit came from; undefined for a pinned commit. */
  refLabel: string | undefined;
  /** `<refLabel>@sha1:<commit>`, or `sha1:<commit>` for a pinned commit. */
  revision: string;
}

export interface RemoteListing {
  /** ref name → object id, e.g. refs/heads/main → 3f2a… */
  refs: Map<string, string>;
  /** annotated tag ref name → the commit it peels to (`^{}` lines). */
  peeled: Map<string, string>;
  /** symbolic refs (from --symref): HEAD → refs/heads/main */
  symrefs: Map<string, string>;
}

export function formatRevision(commit: string, refLabel: string | undefined): string {
  const algo = commit.length === 64 ? 'sha256' : 'sha1';
  return refLabel === undefined ? `${algo}:${commit}` : `${refLabel}@${algo}:${commit}`;
}

/**
 * Arguments after `ls-remote` for a ref. Patterns are full ref names, prefixed by us, so a ref can never be
 * read as an option; `--` ends the options before the URL anyway.
 */
export function lsRemoteArgs(url: string, ref: Exclude<SourceRef, { commit: string }> | undefined): string[] {
  if (ref === undefined) return ['ls-remote', '--symref', '--', url, 'HEAD'];
  if ('branch' in ref) return ['ls-remote', '--', url, `refs/heads/${ref.branch}`];
  if ('tag' in ref) return ['ls-remote', '--', url, `refs/tags/${ref.tag}`, `refs/tags/${ref.tag}^{}`];
  return ['ls-remote', '--tags', '--', url];
}

export function parseLsRemote(stdout: string): RemoteListing {
  const listing: RemoteListing = { refs: new Map(), peeled: new Map(), symrefs: new Map() };
  for (const line of stdout.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const left = line.slice(0, tab).trim();
    const name = line.slice(tab + 1).trim();
    if (left.startsWith('ref: ')) {
      listing.symrefs.set(name, left.slice('ref: '.length));
    } else if (/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(left)) {
      if (name.endsWith('^{}')) listing.peeled.set(name.slice(0, -3), left);
      else listing.refs.set(name, left);
    }
  }
  return listing;
}

/** Picks the commit `ref` names in `listing`; RefNotFound when the remote has no such ref. */
export function selectRef(
  listing: RemoteListing,
  ref: Exclude<SourceRef, { commit: string }> | undefined,
  where: string,
): Result<ResolvedRef> {
  const resolved = (commit: string, label: string): Result<ResolvedRef> =>
    ok({ commit, refLabel: label, revision: formatRevision(commit, label) });
  const notFound = (what: string): Result<never> => fail(Reason.RefNotFound, `${what} not found in ${where}`);

  if (ref === undefined) {
    const head = listing.refs.get('HEAD');
    if (!head) return notFound('HEAD (is the repository empty?)');
    const target = listing.symrefs.get('HEAD');
    const label = target?.startsWith('refs/heads/') ? target.slice('refs/heads/'.length) : 'HEAD';
    return resolved(head, label);
  }
  if ('branch' in ref) {
    const commit = listing.refs.get(`refs/heads/${ref.branch}`);
    return commit ? resolved(commit, ref.branch) : notFound(`branch ${JSON.stringify(ref.branch)}`);
  }
  if ('tag' in ref) {
    const name = `refs/tags/${ref.tag}`;
    const commit = listing.peeled.get(name) ?? listing.refs.get(name);
    return commit ? resolved(commit, ref.tag) : notFound(`tag ${JSON.stringify(ref.tag)}`);
  }
  const tag = highestTagInRange(listing, ref.semver);
  if (!tag) return fail(Reason.RefNotFound, `no tag in ${where} matches semver range ${JSON.stringify(ref.semver)}`);
  const name = `refs/tags/${tag}`;
  const commit = listing.peeled.get(name) ?? listing.refs.get(name);
  return commit ? resolved(commit, tag) : notFound(`tag ${JSON.stringify(tag)}`);
}

/**
 * The tag with the highest version in `range` (a leading "v" is allowed; pre-releases only when the range
 * names one, as semver does). When `1.2.0` and `v1.2.0` both exist, the name that sorts first wins, so the
 * choice is stable.
 */
export function highestTagInRange(listing: RemoteListing, range: string): string | undefined {
  const byVersion = new Map<string, string[]>();
  for (const name of listing.refs.keys()) {
    if (!name.startsWith('refs/tags/')) continue;
    const tag = name.slice('refs/tags/'.length);
    const version = semver.valid(tag.replace(/^v/, ''));
    if (version === null) continue;
    const names = byVersion.get(version) ?? [];
    names.push(tag);
    byVersion.set(version, names);
  }
  const best = semver.maxSatisfying([...byVersion.keys()], range);
  return best === null ? undefined : byVersion.get(best)?.sort()[0];
}
