/**
 * Exit codes of the `packagesync` CLI: a stable contract for scripts (documented in docs/cli.md).
 * 0 and 1 are answers (like `kubectl diff`: 1 = there are differences); 2 and above are errors.
 */
import { CommanderError } from 'commander';
import { KubeApiError } from '../adapters/kube/client.ts';

export const ExitCode = {
  /** No differences, applied and healthy, Ready=True. */
  Ok: 0,
  /** Differences found (diff); the apply, prune or health check failed (apply); Ready=False (reconcile, status). */
  No: 1,
  /** Bad flags or input: unknown flag, a package that does not render, a PackageSync that does not exist. */
  Invalid: 2,
  /** The cluster could not be reached, or refused a request (authentication, RBAC, admission, API errors). */
  Cluster: 3,
  /** No result within --timeout. */
  Timeout: 4,
  /** plan: applying would fail (a conflict, a rejection, an immutable field, skipped dependents, the prune budget). */
  WouldFail: 5,
  /** apply --plan-digest: the plan computed now is not the approved one; nothing was written. */
  PlanChanged: 6,
  /**
   * plan packagesyncset/NAME: at least one target could not be planned (its cluster did not answer, or refused a
   * read or dry run the plan needs); every other target's plan is printed.
   */
  TargetsNotPlanned: 7,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An error whose exit code the command chose; its message is printed as is. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  constructor(exitCode: ExitCode, message: string) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** Which exit code an error thrown out of a command means. */
export function exitCodeOf(e: unknown): number {
  if (e instanceof CliError) return e.exitCode;
  // --help and --version end with a CommanderError of exit code 0; usage errors with 1, which we make 2.
  if (e instanceof CommanderError) return e.exitCode === 0 ? ExitCode.Ok : ExitCode.Invalid;
  // Anything else came from talking to the cluster: an API error, a refused connection, bad credentials.
  return ExitCode.Cluster;
}

/** One line for stderr; API errors keep the server's own words. */
export function errorMessage(e: unknown): string {
  if (e instanceof KubeApiError) return `the API server answered ${e.status} ${e.reason}: ${e.message}`;
  if (e instanceof Error) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    // undici wraps connection errors: "fetch failed" says nothing, the cause (ECONNREFUSED …) does.
    return cause?.message ? `${e.message}: ${cause.message}` : e.message;
  }
  return String(e);
}
