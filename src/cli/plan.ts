/**
 * `packagesync plan NAME`: what the controller would do with a PackageSync's package — its own source, or
 * another git URL and ref, or a local directory (an unmerged change) — asked of the live cluster before
 * anything is merged. Rendered with the controller's functions (plan-source.ts), planned against the
 * PackageSync's inventory and the live objects (engine/package-plan.ts), then every object the controller
 * would send goes through a server-side dry run as the PackageSync's ServiceAccount with the controller's
 * field manager (engine/plan-dry-run.ts). The result, in dependency-graph order, is data (core/plan/
 * plan-report.ts) printed as text, markdown or JSON, with a digest `apply --plan-digest` checks.
 * Exit codes (docs/cli.md#plan): 0 no changes, 1 changes, 2 bad input or render, 3 cluster, 5 would fail.
 * `plan packagesyncset/NAME` plans every target of a set, by wave (set-plan.ts; 7: a target not planned).
 */
import { Option, type Command } from 'commander';
import { hasPlannedChanges } from '../core/plan/plan-report.ts';
import { renderPlanMarkdown, renderPlanText, type PlanDocument } from '../core/plan/plan-render.ts';
import { kubeconfigOption, namespaceOption, withCluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';
import { computePlan } from './plan-package-sync.ts';
import type { PlanFlags } from './plan-source.ts';
import { planSet } from './set-plan.ts';
import { setArgument } from './set-ref.ts';
import { withTargetObjects } from './target-objects.ts';

export function registerPlan(program: Command): void {
  program
    .command('plan')
    .summary("what the controller would do with a PackageSync's package (server-side dry run)")
    .description(
      "Render a PackageSync's package as the controller would (its own source, --url/--ref, or --dir), dry-run " +
        'every object against the live cluster as its ServiceAccount, and compare with its inventory: creates, ' +
        'field-level updates, prunes, field-manager conflicts, admission rejections, immutable fields, workloads ' +
        'that would roll, dependents that would be skipped, in dependency order. packagesyncset/NAME: every target of ' +
        "the set, stamped as the set's controller stamps it, planned in its own cluster, by wave. Exit 0: no changes, " +
        '1: changes, 2: invalid input, 3: cluster error, 5: applying would fail, 7: a target of a set could not be planned.',
    )
    .argument(
      '<name>',
      'the PackageSync, or packagesyncset/NAME (pkset/NAME): every target of the set, by wave (docs/cli.md#plan-packagesyncsetname)',
    )
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
      const setName = setArgument(name);
      if (setName !== undefined) {
        process.exitCode = await withCluster(flags.kubeconfig, (cluster) => planSet(cluster, setName, flags));
        return;
      }
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
