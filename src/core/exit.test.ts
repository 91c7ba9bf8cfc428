import { describe, expect, it } from 'vitest';
import { INTERRUPTED_RETRY_MS, INVALID_SPEC_RETRY_MS, requeueOf, TEARDOWN_RETRY_MS, type Ending } from './exit.ts';

const failure = { reason: 'RenderFailed', message: 'm', terminal: false };
const timing = { intervalMs: 600_000, retryMs: 30_000 };

describe('requeueOf: every requeue delay in one table', () => {
  it.each<[Ending, ReturnType<typeof requeueOf>]>([
    [{ kind: 'succeeded' }, { failed: false, requeueAfterMs: 600_000 }],
    [
      { kind: 'failed', failure },
      { failed: true, requeueAfterMs: 30_000 },
    ],
    [{ kind: 'dependency-not-ready' }, { failed: false, requeueAfterMs: 30_000 }],
    [
      { kind: 'teardown-failed', failure },
      { failed: true, requeueAfterMs: TEARDOWN_RETRY_MS },
    ],
    [{ kind: 'done' }, { failed: false }],
    [{ kind: 'superseded', byManager: true }, { failed: false }],
    [
      { kind: 'superseded', byManager: false },
      { failed: false, requeueAfterMs: 0 },
    ],
    [{ kind: 'interrupted' }, { failed: true, requeueAfterMs: INTERRUPTED_RETRY_MS }],
  ])('%j with the spec read', (ending, requeue) => {
    expect(requeueOf(ending, timing)).toEqual(requeue);
  });

  it('a failure before the spec was read (or valid) waits for an edit, retried after a minute', () => {
    expect(requeueOf({ kind: 'failed', failure }, undefined)).toEqual({
      failed: true,
      requeueAfterMs: INVALID_SPEC_RETRY_MS,
    });
  });
});
