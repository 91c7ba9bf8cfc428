/**
 * Resolving a ref to a commit with `git ls-remote`, shared: callers with the same URL, credentials and ref get
 * the same answer, so concurrent ones (and, within the TTL, later ones) share one ls-remote. Keyed by
 * credential too: a result obtained with one tenant's credentials is never handed to a caller without them.
 */
import { Reason } from '../../api/reasons.ts';
import { fail, type Result } from '../../core/failure.ts';
import type { GitAuth } from './auth.ts';
import { errorName } from './errors.ts';
import { withGitOperation, type OperationOptions } from './git-command.ts';
import { lsRemoteArgs, parseLsRemote, selectRef, type ResolvedRef } from './refs.ts';
import { validateSourceURL, type SourceRef, type SourceURL } from './validate.ts';

/** A ref other than a pinned commit (which ls-remote cannot prove: only a fetch can). */
export type ListedRef = Exclude<SourceRef, { commit: string }>;

/** A call's deadline and cancellation (source.ts's GitCallOptions without the path). */
export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

interface SharedResolve {
  url: string;
  /** When its ls-remote started: it says nothing of a push or a request after that (see forget). */
  startedAt: number;
  result: Promise<Result<ResolvedRef>>;
  /** The signal of the call that runs it: a failure after it aborted says nothing to the others. */
  signal: AbortSignal | undefined;
  /** When the result came back; undefined while in flight. */
  at?: number;
}

export interface RefResolutionOptions {
  allowInsecureHttp: boolean;
  /** How long a resolved ref is reused (0: only concurrent calls share one ls-remote). */
  refCacheTtlMs: number;
  /** The git operation's settings for this source, credentials and call. */
  operation: (source: SourceURL, auth: GitAuth | undefined, opts: CallOptions) => OperationOptions;
  counters: { lsRemotes: number };
}

export class RefResolutions {
  private readonly resolves = new Map<string, SharedResolve>();
  /** URL → the latest moment a push or a requested reconcile said its refs may have moved. */
  private readonly movedAt = new Map<string, number>();
  private readonly options: RefResolutionOptions;

  constructor(options: RefResolutionOptions) {
    this.options = options;
  }

  /** `source` is validated; `credential` is the fingerprint of `auth`. */
  async resolve(
    source: SourceURL,
    credential: string,
    wanted: ListedRef | undefined,
    auth: GitAuth | undefined,
    opts: CallOptions = {},
  ): Promise<Result<ResolvedRef>> {
    const key = `${source.url}\n${credential}\n${JSON.stringify(wanted ?? null)}`;
    const shared = this.resolves.get(key);
    const fresh = shared && shared.startedAt >= (this.movedAt.get(source.url) ?? 0);
    if (shared && fresh && (shared.at === undefined || Date.now() - shared.at < this.options.refCacheTtlMs)) {
      const result = await shared.result;
      // the call we joined was cancelled by its own caller: that proves nothing about this one
      if (result.ok || !shared.signal?.aborted || opts.signal?.aborted) return result;
    }
    const entry: SharedResolve = {
      url: source.url,
      startedAt: Date.now(),
      signal: opts.signal,
      result: this.listRefs(source, wanted, auth, opts),
    };
    this.resolves.set(key, entry);
    const result = await entry.result;
    if (this.resolves.get(key) === entry) {
      if (result.ok && this.options.refCacheTtlMs > 0) entry.at = Date.now();
      else this.resolves.delete(key);
    }
    return result;
  }

  /**
   * This URL's refs may have moved at `since` (a push: now; a requested reconcile: when it was requested, never
   * later than now): a resolve that started before then is not reused, one that started after it is. A fleet's
   * units requested at once thus share one ls-remote started after the request, instead of one each.
   */
  forget(url: string, since = Date.now()): void {
    const normalised = validateSourceURL(url, { allowInsecureHttp: this.options.allowInsecureHttp });
    const at = Math.min(since, Date.now());
    for (const u of new Set([url, ...(normalised.ok ? [normalised.value.url] : [])]))
      this.movedAt.set(u, Math.max(this.movedAt.get(u) ?? 0, at));
    // the entries it outdates go: those started before it (or in the same millisecond: they may have been first)
    for (const [key, entry] of this.resolves) {
      if ((entry.url === url || (normalised.ok && entry.url === normalised.value.url)) && entry.startedAt <= at)
        this.resolves.delete(key);
    }
  }

  private listRefs(
    source: SourceURL,
    wanted: ListedRef | undefined,
    auth: GitAuth | undefined,
    opts: CallOptions,
  ): Promise<Result<ResolvedRef>> {
    this.options.counters.lsRemotes++;
    return withGitOperation(this.options.operation(source, auth, opts), async (op) => {
      let stdout: string;
      try {
        stdout = await op.git().raw(lsRemoteArgs(source.url, wanted));
      } catch (err) {
        return { ok: false, failure: op.failure(err, 'listing refs of') };
      }
      return selectRef(parseLsRemote(stdout), wanted, source.url);
    }).catch((err: unknown) =>
      fail<ResolvedRef>(Reason.FetchFailed, `listing refs of ${source.url} failed: ${errorName(err)}`),
    );
  }
}
