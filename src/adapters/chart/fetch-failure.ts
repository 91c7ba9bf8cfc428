import { Reason } from '../../api/reasons.ts';
import { fail, type Result } from '../../core/failure.ts';
import { renderSandbox } from '../render/sandbox.ts';
import type { ToolOutcome } from '../render/run-tool.ts';

/**
 * A failed `helm repo update` / `helm pull` as a condition: the repository refused the credentials
 * (AuthenticationFailed, without the server's text), no version matches (RefNotFound), anything else
 * FetchFailed with helm's sanitised stderr (run-tool.ts; it never holds the credentials: they are only in the
 * run's repositories.yaml).
 */
export function describeHelmFetchFailure<T>(
  what: string,
  run: Extract<ToolOutcome, { ok: false }>,
  helmPath: string,
): Result<T> {
  switch (run.kind) {
    case 'missing':
      return fail(
        Reason.FetchFailed,
        `${what}: the helm binary is missing or not executable at ${helmPath}; point the controller's --helm-path at it`,
      );
    case 'sandbox-missing':
      return fail(
        Reason.FetchFailed,
        `${what}: the sandbox launcher is missing at ${renderSandbox().bin}; build it (hack/build-cluster.sh render-sandbox)`,
      );
    case 'timeout':
      return fail(Reason.SourceTimeout, `${what} took longer than the controller's --git-timeout and was stopped`);
    case 'too-large':
      return fail(Reason.FetchFailed, `${what}: helm wrote more output than expected and was stopped`);
    case 'aborted':
      return fail(Reason.FetchFailed, `${what} was cancelled`);
    case 'exit':
      break;
  }
  // helm repo update writes why a repository failed to stdout, and only a summary to stderr
  const stderr = run.stderr;
  const said = `${run.stdout ?? ''} ${stderr}`;
  if (/\b401\b|\b403\b|unauthori[sz]ed|forbidden/i.test(said))
    return fail(
      Reason.AuthenticationFailed,
      `${what}: the repository refused the credentials: fix the Secret named by spec.source.chart.secretRef`,
    );
  if (
    /no chart version found|no chart name found|chart "[^"]*" (version "[^"]*" )?not found|not found in [^ ]+ repository|could not locate a version matching|name unknown|manifest unknown/i.test(
      stderr,
    )
  )
    return fail(
      Reason.RefNotFound,
      `${what}: no version of the chart matches: publish one, or fix spec.source.chart.name or .version (helm: ${stderr})`,
    );
  const why = [stderr, run.stdout].filter((s) => s !== undefined && s !== '').join('; ');
  return fail(Reason.FetchFailed, `${what}: ${why || `helm exited ${run.exitCode ?? 'abnormally'}`}`);
}
