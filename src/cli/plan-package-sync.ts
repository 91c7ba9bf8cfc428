/**
 * One PackageSync's plan (`packagesync plan NAME`, and each target of `plan packagesyncset/NAME`): rendered with
 * the controller's functions (plan-source.ts), planned against its inventory and the live objects
 * (engine/package-plan.ts), every object dry-run as its ServiceAccount (engine/plan-dry-run.ts).
 */
import type { PackageSync } from '../api/packagesync.ts';
import type { Objects } from '../engine/ports.ts';
import { parseSpec } from '../core/spec.ts';
import { planDocument, type PlanDocument } from '../core/plan/plan-render.ts';
import { duplicateKeysMessage } from '../core/render/render.ts';
import { planForPackage } from '../engine/package-plan.ts';
import { planWithDryRun } from '../engine/plan-dry-run.ts';
import type { Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';
import { planFailure } from './package-plan.ts';
import { renderForPlan, type PlanSources, type PlanSourceFlags } from './plan-source.ts';

/** One PackageSync's plan in the cluster its objects live in (`target`); `shared`: sources opened by the caller. */
export async function computePlan(
  cluster: Cluster,
  ps: PackageSync,
  target: Objects,
  flags: PlanSourceFlags,
  shared?: PlanSources,
): Promise<PlanDocument> {
  const { name, namespace } = ps.metadata;
  const parsed = parseSpec(ps.spec);
  if (!parsed.ok) throw new CliError(ExitCode.Invalid, `${parsed.failure.reason}: ${parsed.failure.message}`);
  const spec = parsed.value;
  const owner = { name, namespace };
  await target.discovery.refresh();
  // the identity the controller's reconcile binds (run.actAs): every read and dry run goes through it
  const objects = target.forPackage(owner, spec.serviceAccountName);
  const { revision, rendered } = await renderForPlan(cluster, ps, spec, objects, flags, shared);
  // the reconcile's own planning (engine/package-plan.ts): drift policy, ignore rules and prune budget included
  const planned = await planForPackage(objects, ps, spec, rendered, revision);
  if (!planned.ok) throw planFailure(planned.failure);
  const { plan, live, budget } = planned.value;
  const result = await planWithDryRun(
    objects,
    { plan, live: live.byKey },
    {
      force: spec.force,
      owner,
      prune: spec.prune,
      renderDigest: rendered.digest,
      sources: rendered.sources,
      pruneBudget: budget.ok ? { exceeded: false } : { exceeded: true, message: budget.failure.message },
    },
  );
  const source = flags.dir ? { revision, dir: flags.dir } : { revision, url: flags.url ?? spec.source.url };
  // keys the render tool wrote twice are applied last-wins, as the controller applies them: said here too
  const warnings = rendered.duplicateKeys ? [duplicateKeysMessage(rendered.duplicateKeys)] : [];
  return planDocument({ packageSync: owner, source, identity: objects.identity ?? null }, result, warnings);
}
