import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KustomizeSpec } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import { editKustomization } from '../../core/render/kustomization-edit.ts';
import { checkKustomizationTree, findKustomization } from './kustomize-check.ts';
import { runTool } from './run-tool.ts';
import { describeToolFailure, type ToolLimits } from './tool-failure.ts';
import { scratchView } from './scratch-view.ts';

/**
 * `kustomize build` of the package, as upstream builds it. The checkout stays read-only: the build runs in a
 * scratch view of it (scratch-view.ts) where the package's kustomization gets spec.kustomize and origin
 * annotations (core/render/kustomization-edit.ts). Every kustomization reachable is checked first
 * (kustomize-check.ts), then kustomize runs sandboxed (run-tool.ts) with plugins, exec functions and Helm
 * off (its defaults).
 */

export interface KustomizeInput {
  /** The checkout root (read-only). */
  checkoutRoot: string;
  /** Repo-relative package path ("." for the root). */
  packagePath: string;
  spec: KustomizeSpec | undefined;
  bin: string;
  limits: ToolLimits;
  /** Where the scratch view is made. */
  scratchDir: string;
  signal?: AbortSignal;
}

export async function kustomizeBuild(input: KustomizeInput): Promise<Result<string>> {
  const root = await realpath(input.checkoutRoot);
  const pkg = input.packagePath === '.' ? root : join(root, input.packagePath);
  const name = await findKustomization(pkg);
  if (name === undefined)
    return fail(Reason.RenderFailed, `${input.packagePath} holds no kustomization`, { terminal: true });
  const shown = input.packagePath === '.' ? name : `${input.packagePath}/${name}`;
  const edited = editKustomization(await readFile(join(pkg, name), 'utf8'), shown, input.spec);
  if (!edited.ok) return edited;
  // every kustomization reachable, with the package's as the build will see it, is checked in the checkout
  const checked = await checkKustomizationTree(root, pkg, { file: join(pkg, name), text: edited.value });
  if (!checked.ok) return checked;

  const work = await mkdtemp(join(input.scratchDir, 'packagesync-kustomize-'));
  try {
    const viewRoot = join(work, 'repo');
    const viewPkg = await scratchView(root, input.packagePath, viewRoot, name);
    await writeFile(join(viewPkg, name), edited.value, { mode: 0o600 });
    const run = await runTool({
      bin: input.bin,
      // LoadRestrictionsNone: bases elsewhere in the repository; the tree check above keeps it inside
      args: ['build', '--load-restrictor', 'LoadRestrictionsNone', '.'],
      cwd: viewPkg,
      timeoutMs: input.limits.timeoutMs,
      maxOutputBytes: input.limits.maxOutputBytes,
      signal: input.signal,
      hidePaths: [
        { path: viewPkg, as: input.packagePath },
        { path: pkg, as: input.packagePath },
        { path: viewRoot, as: '' },
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
