/**
 * The everyday CLI, on the same engine as the controller: one file per command. Exit codes are a
 * contract (src/cli/exit-codes.ts, docs/cli.md).
 */
import type { Command } from 'commander';
import { registerApply } from './apply.ts';
import { registerApprove } from './set-actions.ts';
import { registerDiff } from './diff.ts';
import { registerPlan } from './plan.ts';
import { registerPushArtifact } from './push-artifact.ts';
import { registerReconcile } from './reconcile.ts';
import { registerRender } from './render.ts';
import { registerStatus } from './status.ts';
import { registerUi } from './ui/command.ts';
import { registerWhy } from './why.ts';

export function registerCliCommands(program: Command): void {
  registerRender(program);
  registerDiff(program);
  registerApply(program);
  registerPlan(program);
  registerStatus(program);
  registerWhy(program);
  registerReconcile(program);
  registerApprove(program);
  registerPushArtifact(program);
  registerUi(program);
}
