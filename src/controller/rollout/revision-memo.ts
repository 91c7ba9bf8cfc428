/**
 * A set's revision is asked of its source once per resync period (the template's interval, at most a minute),
 * like a Flux GitRepository's, not once per pass: a rollout's children wake their set hundreds of times a minute
 * (each status write of each child), and each pass used to run a `git ls-remote` of its own. A change of what the
 * answer depends on (the set's generation: its source or credentials' name; a requested reconcile) asks again at
 * once.
 */
import type { SetRevision } from '../../engine/set-revision.ts';

interface Memo {
  /** What the answer was asked for: the set's generation and requested-at annotation. */
  inputs: string;
  /** When it was asked: the next ask is due a resync period after it. */
  at: number;
  answer: Promise<SetRevision>;
}

export class RevisionMemo {
  private readonly memos = new Map<string, Memo>();

  /** The answer for `key` asked at most `maxAgeMs` ago with the same `inputs`, else `ask()`'s (kept from now). */
  get(
    key: string,
    inputs: string,
    now: number,
    maxAgeMs: number,
    ask: () => Promise<SetRevision>,
  ): Promise<SetRevision> {
    const memo = this.memos.get(key);
    if (memo && memo.inputs === inputs && now - memo.at < maxAgeMs) return memo.answer;
    const answer = ask();
    const entry: Memo = { inputs, at: now, answer };
    this.memos.set(key, entry);
    // an ask that threw (a cancelled pass) is not an answer: the next pass asks again
    answer.catch(() => {
      if (this.memos.get(key) === entry) this.memos.delete(key);
    });
    return answer;
  }

  forget(key: string): void {
    this.memos.delete(key);
  }
}
