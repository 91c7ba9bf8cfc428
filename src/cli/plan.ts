/**
 * `packagesync plan NAME`: what the controller would do with a PackageSync's package — its own source, or
 * another git URL and ref, or a local directory (an unmerged change) — asked of the live cluster before
 * anything is merged. Rendered with the controller's functions (plan-source.ts), planned against the
 * PackageSync's inventory and the live objects (engine/package-plan.ts), then every object the controller
 * would send goes through a server-side dry run as the PackageSync's ServiceAccount with the controller's
 * field manager (engine/plan-dry-run.ts). The result, in dependency-graph order, is data (core/plan/
 * plan-report.ts) printed as text, markdown or JSON, with a digest `apply --plan-digest` checks.
 * Exit codes (docs/cli.md#plan): 0 no changes, 1 changes, 2 bad input or render, 3 cluster, 5 would fail.
 */
import { Option, type Command } from 'commander';
import type { PackageSync } from '../api/packagesync.ts';
import type { Objects } from '../engine/ports.ts';
import { parseSpec } from '../core/spec.ts';
import { hasPlannedChanges } from '../core/plan/plan-report.ts';
import { planDocument, renderPlanMarkdown, renderPlanText, type PlanDocument } from '../core/plan/plan-render.ts';
import { duplicateKeysMessage } from '../core/render/render.ts';
import { planForPackage } from '../engine/package-plan.ts';
import { planWithDryRun } from '../engine/plan-dry-run.ts';
import { kubeconfigOption, namespaceOption, withCluster, type Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';
import { planFailure } from './package-plan.ts';
import { renderForPlan, type PlanSourceFlags } from './plan-source.ts';
import { withTargetObjects } from './target-objects.ts';

interface PlanFlags extends PlanSourceFlags {
  namespace?: string;
  kubeconfig?: string;
  output: 'text' | 'json' | 'markdown';
}

export function registerPlan(program: Command): void {
  program
    .command('plan')
    .summary("what the controller would do with a PackageSync's package (server-side dry run)")
    .description(
      "Render a PackageSync's package as the controller would (its own source, --url/--ref, or --dir), dry-run " +
        'every object against the live cluster as its ServiceAccount, and compare with its inventory: creates, ' +
        'field-level updates, prunes, field-manager conflicts, admission rejections, immutable fields, workloads ' +
        'that would roll, dependents that would be skipped, in dependency order. Exit 0: no changes, 1: changes, ' +
        '2: invalid input, 3: cluster error, 5: applying would fail.',
    )
    .argument('<name>', 'the PackageSync')
    .addOption(namespaceOption())
    .addOption(
      new Option('--url <url>', 'plan this git repository instead of spec.source.url (default: spec.source.url)'),
    )
    .addOption(
      new Option(
        '--ref <ref>',
        'plan this ref instead of spec.source.ref: a branch name, a 40-hex commit, or branch:|tag:|semver:|commit:VALUE (default: spec.source.ref)',
      ),
    )
    .addOption(
      new Option(
        '--dir <dir>',
        'plan this local package directory instead of the git source (default: none, the git source)',
      ).conflicts(['url', 'ref']),
    )
    .addOption(
      new Option('--allow-insecure-http', 'allow an http:// git URL, as the controller flag of that name').default(
        false,
      ),
    )
    .addOption(
      new Option(
        '--sops-age-secret <namespace/name>',
        "the controller's --sops-age-secret (in the controller's namespace): its age keys decrypt for a spec.decryption without a secretRef, as in the controller (default: none)",
      ),
    )
    .addOption(
      new Option('-o, --output <format>', 'text, json (docs/cli.md#plan) or markdown (a pull-request comment)')
        .choices(['text', 'json', 'markdown'])
        .default('text'),
    )
    .addOption(kubeconfigOption())
    .action(async (name: string, flags: PlanFlags) => {
      process.exitCode = await withCluster(flags.kubeconfig, async (cluster) => {
        const namespace = flags.namespace ?? cluster.contextNamespace;
        const ps = await cluster.packageSyncs.get(namespace, name);
        if (!ps) throw new CliError(ExitCode.Invalid, `PackageSync ${namespace}/${name} not found`);
        // spec.kubeConfig: live objects, dry runs and discovery are the target cluster's (target-objects.ts)
        const doc = await withTargetObjects(cluster, ps, (target) => computePlan(cluster, ps, target, flags));
        const render = { text: renderPlanText, markdown: renderPlanMarkdown, json: renderJson }[flags.output];
        process.stdout.write(render(doc));
        if (doc.wouldFail) return ExitCode.WouldFail;
        return hasPlannedChanges(doc) ? ExitCode.No : ExitCode.Ok;
      });
    });
}

const renderJson = (doc: PlanDocument) => `${JSON.stringify(doc, null, 2)}\n`;

async function computePlan(
  cluster: Cluster,
  ps: PackageSync,
  target: Objects,
  flags: PlanFlags,
): Promise<PlanDocument> {
  const { name, namespace } = ps.metadata;
  const parsed = parseSpec(ps.spec);
  if (!parsed.ok) throw new CliError(ExitCode.Invalid, `${parsed.failure.reason}: ${parsed.failure.message}`);
  const spec = parsed.value;
  const owner = { name, namespace };
  await target.discovery.refresh();
  // the identity the controller's reconcile binds (run.actAs): every read and dry run goes through it
  const objects = target.forPackage(owner, spec.serviceAccountName);
  const { revision, rendered } = await renderForPlan(cluster, ps, spec, objects, flags);
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
