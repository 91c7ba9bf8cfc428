import { Reason } from '../../api/reasons.ts';
import { fail } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import type { ToolOutcome } from './run-tool.ts';

export interface ToolLimits {
  timeoutMs: number;
  maxOutputBytes: number;
  /** Files a scratch copy of the checkout may hold (the controller's --max-files). */
  maxFiles: number;
}

/**
 * A failed tool run as a RenderFailed condition. Terminal when the same input would fail again (the
 * tool said no, or the output is too large); a missing binary, a timeout (the machine may be slow) and a
 * cancelled run are retried.
 */
export function describeToolFailure<T>(
  tool: 'kustomize' | 'helm',
  what: string,
  run: Extract<ToolOutcome, { ok: false }>,
  input: { bin: string; limits: ToolLimits },
): Result<T> {
  const flag = tool === 'kustomize' ? '--kustomize-path' : '--helm-path';
  switch (run.kind) {
    case 'missing':
      return fail(
        Reason.RenderFailed,
        `${what}: the ${tool} binary is missing or not executable at ${input.bin}; install it or point the controller's ${flag} at it`,
      );
    case 'timeout':
      return fail(
        Reason.RenderFailed,
        `${what} ran longer than ${Math.round(input.limits.timeoutMs / 1000)}s and was stopped; make the package smaller or raise --render-timeout`,
      );
    case 'too-large':
      return fail(
        Reason.RenderFailed,
        `${what} wrote more than ${input.limits.maxOutputBytes} bytes and was stopped; make the package smaller or raise --render-max-output-bytes`,
        { terminal: true },
      );
    case 'aborted':
      return fail(Reason.RenderFailed, `${what} was cancelled`);
    case 'exit':
      return fail(
        Reason.RenderFailed,
        `${what} failed${run.exitCode != null ? ` (exit ${run.exitCode})` : ''}: ${run.stderr || 'no error output'}`,
        { terminal: true },
      );
  }
}
