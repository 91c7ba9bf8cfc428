import { join } from 'node:path';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import { describeHelmFailure, prepareChart, type HelmInput } from './helm.ts';
import { decryptedBuildFailed, prepareKustomization, type KustomizeInput, type KustomizeOutput } from './kustomize.ts';

/** A render's output as the worker gave it: YAML, or its JSON documents ('objects'). */
export type ToolOutput = Pick<KustomizeOutput, 'stdout' | 'format'>;
import { sanitizeStderr, type ToolOutcome } from './run-tool.ts';
import { describeToolFailure, type ToolLimits } from './tool-failure.ts';
import type { HelmLookup } from './worker-lookup.ts';
import type { RenderWorkerPool, WorkerOutcome } from './worker-pool.ts';

/**
 * kustomize build and helm template in the render worker pool (worker-pool.ts, docs/adr/0038). The same checks
 * run first as on the subprocess path (kustomize.ts and helm.ts prepare; nothing reaches a worker before they
 * pass), the same inputs reach the library, and a failure reads as the binary's would: the library's error
 * as the binary prints it ("Error: …", exit 1), repo-relative. What only a worker can do — time out, panic,
 * crash — names the package's file and says the render was tried twice.
 */

type WorkerInput<T> = Omit<T, 'bin' | 'scratchDir'> & { pool: RenderWorkerPool };

/** `objects`: the output as JSON objects where the worker can give it so (the controller's reconcile reads those). */
export async function kustomizeInWorker(
  input: WorkerInput<KustomizeInput> & { objects?: boolean },
): Promise<Result<KustomizeOutput>> {
  const prepared = await prepareKustomization(input);
  if (!prepared.ok) return prepared;
  const { root, pkg, shown, plaintext, edited } = prepared.value;
  // the edited kustomization and decrypted sources are read in place of the checkout's files (never written)
  const replace: Record<string, string> = { [join(root, shown)]: Buffer.from(edited).toString('base64') };
  for (const [file, text] of plaintext) replace[join(root, file)] = text.toString('base64');
  const what = `kustomize build ${input.packagePath}`;
  const outcome = await input.pool.render(
    { op: 'kustomize', kustomize: { root, dir: pkg, replace }, ...(input.objects ? { objects: true } : {}) },
    { timeoutMs: input.limits.timeoutMs, maxOutputBytes: input.limits.maxOutputBytes, signal: input.signal },
  );
  if (!outcome.ok && outcome.kind === 'failed' && plaintext.size > 0)
    return decryptedBuildFailed(input.packagePath, plaintext.keys(), 'exit 1');
  if (!outcome.ok) {
    const hide = [
      { path: pkg, as: input.packagePath },
      { path: root, as: '' },
    ];
    return describeWorkerFailure('kustomize', what, shown, outcome, hide, {
      bin: input.pool.bin,
      limits: input.limits,
    });
  }
  const output: KustomizeOutput =
    outcome.objects !== undefined ? { stdout: outcome.objects, format: 'objects' } : { stdout: outcome.yaml };
  if (plaintext.size === 0) return ok(output);
  return ok({
    ...output,
    decrypted: { files: [...plaintext.keys()], cipherDigest: prepared.value.cipherDigest ?? '' },
  });
}

/** `objects`: the output as the worker's JSON documents where it can give it so (the controller's reconcile reads those). */
export async function helmInWorker(
  input: WorkerInput<HelmInput> & { lookup?: HelmLookup; objects?: boolean },
): Promise<Result<ToolOutput>> {
  const prepared = await prepareChart(input);
  if (!prepared.ok) return prepared;
  const { root, chart, what } = prepared.value;
  const outcome = await input.pool.render(
    {
      op: 'helm',
      helm: {
        root,
        chart,
        releaseName: input.releaseName,
        namespace: input.namespace,
        includeCRDs: input.spec?.includeCRDs !== false,
        ...(input.capabilities
          ? { kubeVersion: input.capabilities.kubeVersion, apiVersions: input.capabilities.apiVersions }
          : {}),
        ...(input.lookup ? { lookup: true } : {}),
        values: [
          ...prepared.value.valuesFiles.map((path) => ({ path })),
          // named as the subprocess path's value files read in messages
          ...prepared.value.layers.map((text, i) => ({ name: `spec.helm/values-${i}.yaml`, text })),
        ],
      },
      ...(input.objects ? { objects: true } : {}),
    },
    {
      timeoutMs: input.limits.timeoutMs,
      maxOutputBytes: input.limits.maxOutputBytes,
      signal: input.signal,
      lookup: input.lookup,
    },
  );
  if (outcome.ok)
    return ok(
      outcome.objects !== undefined ? { stdout: outcome.objects, format: 'objects' } : { stdout: outcome.yaml },
    );
  const hide = [
    { path: chart, as: input.packagePath },
    { path: root, as: '' },
  ];
  const file = input.packagePath === '.' ? 'Chart.yaml' : `${input.packagePath}/Chart.yaml`;
  return describeWorkerFailure('helm', what, file, outcome, hide, { bin: input.pool.bin, limits: input.limits });
}

/** A failed worker render as a RenderFailed condition, worded as the subprocess path words the same failure. */
export function describeWorkerFailure<T>(
  tool: 'kustomize' | 'helm',
  what: string,
  file: string,
  outcome: Extract<WorkerOutcome, { ok: false }>,
  hide: { path: string; as: string }[],
  input: { bin: string; limits: ToolLimits },
): Result<T> {
  const stderr = sanitizeStderr(outcome.error, hide);
  const asTool = (run: Extract<ToolOutcome, { ok: false }>): Result<T> =>
    tool === 'helm' ? describeHelmFailure<T>(what, run, input) : describeToolFailure<T>(tool, what, run, input);
  const tried = outcome.attempts > 1 ? ', twice, each time on a fresh render worker' : '';
  switch (outcome.kind) {
    case 'failed':
      // the binary prints its error so and exits 1
      return asTool({ ok: false, kind: 'exit', exitCode: 1, stderr: sanitizeStderr(`Error: ${outcome.error}`, hide) });
    case 'too-large':
    case 'aborted':
    case 'sandbox-missing':
      return asTool({ ok: false, kind: outcome.kind, stderr: '' });
    case 'missing':
      return fail(
        Reason.RenderFailed,
        `${what}: the render worker is missing or not executable at ${input.bin}; build it (hack/build-cluster.sh render-worker), point the controller's --render-worker-path at it, or run with --render-engine=subprocess`,
      );
    case 'timeout':
      return fail(
        Reason.RenderFailed,
        `${what} ran longer than ${Math.round(input.limits.timeoutMs / 1000)}s rendering ${file} and was stopped${tried}; make the package smaller or raise --render-timeout`,
      );
    case 'panic':
      return fail(
        Reason.RenderFailed,
        `${what} failed: ${tool} panicked rendering ${file}${tried}: ${stderr || 'no message'}; change the package (or report the panic upstream)`,
        { terminal: true },
      );
    case 'crash': {
      // Go's own last words say why: out of memory, a stack past its bound (template recursion)
      const told = asTool({ ok: false, kind: 'exit', exitCode: outcome.exitCode, stderr });
      if (!told.ok && /ran out of memory|template recursion too deep/.test(told.failure.message)) return told;
      return fail(
        Reason.RenderFailed,
        `${what} failed: the render worker stopped (${outcome.exitCode != null ? `exit ${outcome.exitCode}` : 'killed'}) rendering ${file}${tried}: ${stderr || 'no error output'}`,
      );
    }
  }
}
