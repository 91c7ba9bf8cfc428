import type { ObjectRef } from './object.ts';

/**
 * Every step of the pipeline returns a value or a Failure. Only the status reducer turns a Failure into
 * conditions, so each reason string has one home (src/api/reasons.ts).
 */
export interface Failure {
  /** PascalCase reason, e.g. PathNotFound, OwnershipConflict: becomes the Ready condition's reason. */
  reason: string;
  /** What happened and what the user can change. Never contains secret values or file contents. */
  message: string;
  /** The object the failure is about, when there is one. */
  object?: ObjectRef;
  /** True when retrying the same input cannot succeed (bad input): the status says Stalled. */
  terminal: boolean;
}

/** The message of a thrown value: what logs and failures quote (never the value's other properties). */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export type Result<T> = { ok: true; value: T } | { ok: false; failure: Failure };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = <T = never>(
  reason: string,
  message: string,
  opts: { object?: ObjectRef; terminal?: boolean } = {},
): Result<T> => ({
  ok: false,
  failure: { reason, message, terminal: opts.terminal ?? false, ...(opts.object ? { object: opts.object } : {}) },
});
