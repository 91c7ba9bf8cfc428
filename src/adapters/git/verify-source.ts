import { join } from 'node:path';
import type { SourceVerify } from '../../api/decryption.ts';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import type { AllowedKeys } from '../../core/signers.ts';
import type { GitAuth } from './auth.ts';
import { withGitOperation } from './git-command.ts';
import { repoOfCheckout, verifySignature } from './verify.ts';
import type { SourceURL } from './validate.ts';

/**
 * spec.source.verify with Flux's GitRepository modes: HEAD verifies the commit to apply, Tag the annotated
 * tag the ref resolved through (spec.source.ref.tag, or the tag semver chose), TagAndHEAD both. The commit
 * is already in the cache repo; a tag object is not (the cache fetches commits by id, no tags), so it is
 * fetched, depth 1, into a throwaway bare repo inside the operation's private directory, and must still
 * point at the commit being applied.
 */

export interface SourceVerifyRequest {
  verify: SourceVerify;
  url: SourceURL;
  auth: GitAuth | undefined;
  /** The commit to apply and its read-only checkout (in the shared cache). */
  commit: string;
  checkoutRoot: string;
  /** The tag the ref resolved through; undefined for a branch, a pinned commit or the remote HEAD. */
  tag: string | undefined;
  keys: AllowedKeys;
  tmpRoot: string;
  allowInsecureHttp: boolean;
  timeoutMs: number;
  signal: AbortSignal;
}

export async function verifySource(req: SourceVerifyRequest): Promise<Result<void>> {
  const mode = req.verify.mode;
  if (mode === 'HEAD' || mode === 'TagAndHEAD') {
    const head = await verifySignature({
      gitDir: repoOfCheckout(req.checkoutRoot),
      object: req.commit,
      kind: 'commit',
      what: `commit ${req.commit}`,
      keys: req.keys,
      timeoutMs: req.timeoutMs,
    });
    if (!head.ok || mode === 'HEAD') return head;
  }
  if (req.tag === undefined) {
    return fail(
      Reason.VerificationFailed,
      `spec.source.verify.mode ${mode} verifies a tag, but spec.source.ref names none: set ref.tag or ref.semver, or use mode HEAD`,
      { terminal: true },
    );
  }
  const tag = req.tag;
  // a spec tag passed validateRef; a semver tag is a name the server listed: both go into a refspec we build
  if (!/^[A-Za-z0-9_][A-Za-z0-9._+/-]*$/.test(tag) || tag.includes('..')) {
    return fail(Reason.VerificationFailed, `tag ${JSON.stringify(tag)} cannot be verified: not a plain tag name`, {
      terminal: true,
    });
  }
  return withGitOperation(
    {
      tmpRoot: req.tmpRoot,
      source: req.url,
      auth: req.auth,
      allowInsecureHttp: req.allowInsecureHttp,
      timeoutMs: req.timeoutMs,
      signal: req.signal,
    },
    async (op) => {
      const repo = join(op.dir, 'tag.git');
      let tagObject: string;
      try {
        await op.git(op.dir).raw(['init', '--bare', '--quiet', repo]);
        const git = op.git(repo, { GIT_DIR: repo });
        await git.raw([
          'fetch',
          '--quiet',
          '--depth=1',
          '--no-tags',
          '--no-write-fetch-head',
          '--no-recurse-submodules',
          '--',
          req.url.url,
          `+refs/tags/${tag}:refs/tags/${tag}`,
        ]);
        tagObject = (await git.raw(['rev-parse', '--verify', `refs/tags/${tag}`])).trim();
        const type = (await git.raw(['cat-file', '-t', tagObject])).trim();
        if (type !== 'tag') {
          return fail(
            Reason.VerificationFailed,
            `tag ${tag} is a lightweight tag: only an annotated tag can be signed`,
            {
              terminal: true,
            },
          );
        }
        const target = (await git.raw(['rev-parse', '--verify', `refs/tags/${tag}^{commit}`])).trim();
        if (target !== req.commit) {
          return fail(Reason.VerificationFailed, `tag ${tag} moved while it was verified (now ${target}); retrying`);
        }
      } catch (err) {
        return { ok: false, failure: op.failure(err, `fetching tag ${tag} for verification from`) };
      }
      return verifySignature({
        gitDir: repo,
        object: tagObject,
        kind: 'tag',
        what: `tag ${tag}`,
        keys: req.keys,
        timeoutMs: req.timeoutMs,
      });
    },
  ).then((r) => (r.ok ? ok(undefined) : r));
}
