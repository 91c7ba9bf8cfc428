import { lstat, mkdtemp, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { HelmSpec } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import { isInside } from '../../core/inside.ts';
import { realpathInside } from '../git/read-package.ts';
import { checkChartSchemas } from './helm-schema.ts';
import { repoPath } from './kustomize-check.ts';
import { runTool, type ToolOutcome } from './run-tool.ts';
import { describeToolFailure, type ToolLimits } from './tool-failure.ts';

/**
 * `helm template` of the chart at the package path, as upstream renders it: release name and namespace,
 * values (files in the repository, then ConfigMap/Secret keys, then inline, in Flux's order), CRDs, and the
 * cluster's real version and API versions as .Capabilities. Charts are read from the checkout only:
 * every symlink in the chart must stay inside it, and dependencies must be vendored in charts/ (helm
 * template downloads nothing without --dependency-update, which is never passed). Values from Secrets go
 * to a private file for the run and are never logged.
 */

export interface HelmCapabilities {
  /** e.g. v1.36.3 */
  kubeVersion: string;
  /** group/version and group/version/Kind entries, as helm's Capabilities.APIVersions holds them. */
  apiVersions: string[];
}

export interface HelmInput {
  checkoutRoot: string;
  packagePath: string;
  spec: HelmSpec | undefined;
  releaseName: string;
  namespace: string;
  /** valuesFrom contents, in spec order (already read from the cluster). */
  valuesFrom: string[];
  capabilities: HelmCapabilities | undefined;
  bin: string;
  limits: ToolLimits;
  scratchDir: string;
  signal?: AbortSignal;
}

/** What both render engines give helm, after the checks: nothing runs before they pass. */
export interface PreparedChart {
  root: string;
  chart: string;
  what: string;
  /** spec.helm.valuesFiles, each resolved inside the checkout. */
  valuesFiles: string[];
  /** valuesFrom contents, then inline values as JSON: later layers win. */
  layers: string[];
}

export async function prepareChart(
  input: Pick<HelmInput, 'checkoutRoot' | 'packagePath' | 'spec' | 'valuesFrom' | 'limits'>,
): Promise<Result<PreparedChart>> {
  const root = await realpath(input.checkoutRoot);
  const chart = input.packagePath === '.' ? root : join(root, input.packagePath);
  const what = `helm template ${input.packagePath}`;
  if (!(await stat(join(chart, 'Chart.yaml')).catch(() => undefined))?.isFile())
    return fail(
      Reason.RenderFailed,
      `${what}: ${input.packagePath} holds no Chart.yaml; spec.helm needs a chart at spec.source.path`,
      {
        terminal: true,
      },
    );
  const walked = await walkChart(root, chart, input.limits.maxFiles);
  if (!walked.ok) return walked;
  const schemaRef = await checkChartSchemas(root, chart, walked.value);
  if (schemaRef && !schemaRef.ok) return schemaRef;
  const valuesFiles: string[] = [];
  for (const file of input.spec?.valuesFiles ?? []) {
    // repository paths, as Flux's HelmChart valuesFiles (Argo CD's valueFiles are relative to the chart)
    const real = await realpathInside(root, join(root, posix.normalize(file)));
    const entry = `spec.helm.valuesFiles entry ${JSON.stringify(file)}`;
    if (real === undefined)
      return fail(
        Reason.RenderRefused,
        `${entry} resolves outside the repository; only files of this repository can be used`,
        {
          terminal: true,
        },
      );
    if (real === null)
      return fail(Reason.RenderFailed, `${entry} does not exist at this revision; fix the path or commit the file`, {
        terminal: true,
      });
    valuesFiles.push(real);
  }
  // valuesFrom, then inline values: later files win, as in Flux's HelmRelease. Inline values go as JSON: Helm
  // reads YAML 1.1 (go-yaml v2), so a string "no" or "0755" written as plain YAML would reach it as false or 493
  const layers = [...input.valuesFrom, ...(input.spec?.values ? [JSON.stringify(input.spec.values)] : [])];
  return ok({ root, chart, what, valuesFiles, layers });
}

/** A failed helm run, with the hint a missing dependency needs. */
export function describeHelmFailure<T>(
  what: string,
  run: Extract<ToolOutcome, { ok: false }>,
  input: { bin: string; limits: ToolLimits },
): Result<T> {
  const failed = describeToolFailure<T>('helm', what, run, input);
  if (!failed.ok && /missing in charts\/ directory|found in Chart\.yaml, but missing/i.test(run.stderr)) {
    failed.failure.message +=
      "; dependencies are not downloaded by the render (the source fetches those its Chart.yaml names by an https:// or oci:// repository URL): vendor them into the chart's charts/ directory (helm dependency build) and commit them, or name their repository URL";
  }
  return failed;
}

export async function helmTemplate(input: HelmInput): Promise<Result<string>> {
  const prepared = await prepareChart(input);
  if (!prepared.ok) return prepared;
  const { root, chart, what } = prepared.value;
  const args = ['template', input.releaseName, '.', '--namespace', input.namespace, '--skip-tests'];
  if (input.spec?.includeCRDs !== false) args.push('--include-crds');
  if (input.capabilities) {
    args.push('--kube-version', input.capabilities.kubeVersion);
    for (const v of input.capabilities.apiVersions) args.push('--api-versions', v);
  }
  for (const real of prepared.value.valuesFiles) args.push('--values', real);

  const work = await mkdtemp(join(input.scratchDir, 'packagesync-helm-'));
  try {
    for (const [i, text] of prepared.value.layers.entries()) {
      const file = join(work, `values-${i}.yaml`);
      await writeFile(file, text, { mode: 0o600 });
      args.push('--values', file);
    }
    const run = await runTool({
      bin: input.bin,
      args,
      cwd: chart,
      // the checkout (values files, links inside it) and this run's value files: nothing else (render-sandbox)
      reads: [root, work],
      timeoutMs: input.limits.timeoutMs,
      maxOutputBytes: input.limits.maxOutputBytes,
      signal: input.signal,
      hidePaths: [
        { path: chart, as: input.packagePath },
        { path: work, as: 'spec.helm' },
        { path: root, as: '' },
      ],
    });
    if (!run.ok) return describeHelmFailure(what, run, input);
    return ok(run.stdout);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * helm follows symlinks when it loads a chart: each one must stay inside the checkout. Returns the chart's
 * values.schema.json files (its subcharts' too), whose references are checked next.
 */
export async function walkChart(root: string, dir: string, maxEntries: number): Promise<Result<string[]>> {
  const pending = [dir];
  const schemas: string[] = [];
  let entries = 0;
  while (pending.length > 0) {
    const current = pending.pop() as string;
    for (const entry of await readdir(current, { withFileTypes: true })) {
      if (++entries > maxEntries)
        return fail(Reason.ArtifactTooLarge, `the chart holds more than ${maxEntries} files`, { terminal: true });
      const path = join(current, entry.name);
      if (entry.isSymbolicLink()) {
        const real = await realpathInside(root, path);
        if (real === undefined)
          return fail(
            Reason.RenderRefused,
            `${repoPath(root, path)} is a symlink that points outside the repository; helm would read it`,
            { terminal: true },
          );
        if (real === null) continue;
        // a directory outside the chart (app/extra → ../app-files) is walked too: helm reads through it
        if ((await lstat(real)).isDirectory()) {
          if (!isInside(dir, real)) pending.push(real);
        } else if (entry.name === 'values.schema.json') schemas.push(real);
      } else if (entry.isDirectory()) {
        pending.push(path);
      } else if (entry.name === 'values.schema.json') {
        schemas.push(path);
      }
    }
  }
  return ok(schemas);
}
