import { mkdtemp, readFile, realpath, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KustomizeSpec } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import { editKustomization } from '../../core/render/kustomization-edit.ts';
import { checkKustomizationTree, findKustomization } from './kustomize-check.ts';
import { runTool } from './run-tool.ts';
import { describeToolFailure, type ToolLimits } from './tool-failure.ts';
import { scratchCopy, TooManyEntries } from './scratch-copy.ts';

/**
 * `kustomize build` of the package, as upstream builds it. The checkout stays read-only: the build runs in a
 * scratch copy (hard links) where the package's kustomization gets spec.kustomize and origin annotations
 * (core/render/kustomization-edit.ts). Every kustomization reachable is checked first (kustomize-check.ts),
 * then kustomize runs sandboxed (run-tool.ts) with plugins, exec functions and Helm off (its defaults).
 */

export interface KustomizeInput {
  /** The checkout root (read-only). */
  checkoutRoot: string;
  /** Repo-relative package path ("." for the root). */
  packagePath: string;
  spec: KustomizeSpec | undefined;
  bin: string;
  limits: ToolLimits;
  /** Where scratch copies go; on the checkout's filesystem, files are hard-linked instead of copied. */
  scratchDir: string;
  signal?: AbortSignal;
}

export async function kustomizeBuild(input: KustomizeInput): Promise<Result<string>> {
  const root = await realpath(input.checkoutRoot);
  const work = await mkdtemp(join(input.scratchDir, 'packagesync-kustomize-'));
  try {
    const copyRoot = join(work, 'repo');
    try {
      await scratchCopy(root, copyRoot, input.limits.maxFiles);
    } catch (err) {
      if (err instanceof TooManyEntries)
        return fail(
          Reason.ArtifactTooLarge,
          `the repository holds more than ${err.limit} files; kustomize is not run`,
          {
            terminal: true,
          },
        );
      throw err;
    }
    const pkg = input.packagePath === '.' ? copyRoot : join(copyRoot, input.packagePath);
    const name = await findKustomization(pkg);
    if (name === undefined)
      return fail(Reason.RenderFailed, `${input.packagePath} holds no kustomization`, { terminal: true });
    const shown = input.packagePath === '.' ? name : `${input.packagePath}/${name}`;
    const file = join(pkg, name);
    const edited = editKustomization(await readFile(file, 'utf8'), shown, input.spec);
    if (!edited.ok) return edited;
    await unlink(file); // a hard link to the checkout's file: never write through it
    await writeFile(file, edited.value, { mode: 0o600 });

    const checked = await checkKustomizationTree(copyRoot, pkg);
    if (!checked.ok) return checked;

    const run = await runTool({
      bin: input.bin,
      // LoadRestrictionsNone: bases elsewhere in the repository; the tree check above keeps it inside
      args: ['build', '--load-restrictor', 'LoadRestrictionsNone', '.'],
      cwd: pkg,
      timeoutMs: input.limits.timeoutMs,
      maxOutputBytes: input.limits.maxOutputBytes,
      signal: input.signal,
      hidePaths: [
        { path: pkg, as: input.packagePath },
        { path: copyRoot, as: '' },
        { path: work, as: '' },
        { path: root, as: '' },
      ],
    });
    if (!run.ok) return describeToolFailure('kustomize', `kustomize build ${input.packagePath}`, run, input);
    return ok(run.stdout);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
