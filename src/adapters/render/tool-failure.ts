import { Reason } from '../../api/reasons.ts';
import { fail } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import type { ToolOutcome } from './run-tool.ts';
import { renderSandbox } from './sandbox.ts';

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
    case 'sandbox-missing':
      return fail(
        Reason.RenderFailed,
        `${what}: the render sandbox launcher is missing or not executable at ${renderSandbox().bin}; build it (hack/build-cluster.sh render-sandbox) or point the controller's --render-sandbox-path at it`,
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
      if (/goroutine stack exceeds|fatal error: stack overflow/.test(run.stderr)) {
        const file = /\btemplates\/[\w./-]+/.exec(run.stderr)?.[0] ?? `${what.split(' ').pop() ?? ''}/templates`;
        return fail(
          Reason.RenderFailed,
          `${what} failed: template recursion too deep in ${file}; a template includes itself without end, stop the recursion`,
          { terminal: true },
        );
      }
      if (/fatal error: runtime: out of memory|runtime: out of memory|cannot allocate memory/.test(run.stderr)) {
        return fail(
          Reason.RenderFailed,
          `${what} ran out of memory (the render's limit is ${Math.round(renderSandbox().maxMemoryBytes / (1 << 20))} MiB of address space) and was stopped; make the package smaller`,
          { terminal: true },
        );
      }
      return fail(
        Reason.RenderFailed,
        `${what} failed${run.exitCode != null ? ` (exit ${run.exitCode})` : ''}: ${run.stderr || 'no error output'}`,
        { terminal: true },
      );
  }
}
