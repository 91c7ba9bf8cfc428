/**
 * `packagesync plan packagesyncset/NAME`: what each wave of a set's rollout would change, per target, before the
 * rollout moves anything (issue 31). The set controller's own pieces decide: readSetSpec, generateTargets over the
 * registered clusters of the set's namespace (their Secrets' metadata only), resolveSetRevision for the revision
 * it would roll out now, rolloutWaves for the order, childObject for the PackageSync each target gets. Each child is
 * then planned as `plan NAME` plans a PackageSync (plan-package-sync.ts), in its own cluster: the target's kubeconfig
 * Secret read as the controller reads it (target-objects.ts), against the existing child's inventory. A target
 * that cannot be planned is named with its reason and counted; the others are still planned.
 */
import type { PackageSync } from '../api/packagesync.ts';
import type { PackageSyncSet, SetSpec } from '../api/packagesyncset.ts';
import { listClusterSecrets } from '../adapters/kube/cluster-secrets.ts';
import { Secrets } from '../adapters/kube/secrets.ts';
import { renderPlanMarkdown, renderPlanText } from '../core/plan/plan-render.ts';
import { childObject, ownedBy, setRef } from '../core/rollout/child.ts';
import { readSetSpec } from '../core/rollout/set-spec.ts';
import {
  MARKDOWN_STYLE,
  renderSetPlan,
  rolloutWaves,
  setPlanDocument,
  setPlanVerdict,
  TEXT_STYLE,
  type SetPlanDocument,
  type SetPlanTarget,
} from '../core/rollout/set-plan.ts';
import { NO_TARGETS } from '../core/rollout/step.ts';
import { generateTargets, type Target } from '../core/rollout/targets.ts';
import { resolveSetRevision } from '../engine/set-revision.ts';
import type { Cluster } from './cluster.ts';
import { CliError, errorMessage, ExitCode, exitCodeOf } from './exit-codes.ts';
import { computePlan } from './plan-package-sync.ts';
import type { PlanFlags } from './plan-source.ts';
import { openPlanSources, type PlanSources } from './plan-source.ts';
import { getSet } from './set-ref.ts';
import { withTargetObjects } from './target-objects.ts';

const EXIT = {
  wouldFail: ExitCode.WouldFail,
  partial: ExitCode.TargetsNotPlanned,
  changes: ExitCode.No,
  none: ExitCode.Ok,
};

export async function planSet(cluster: Cluster, name: string, flags: PlanFlags): Promise<number> {
  if (flags.url || flags.ref || flags.dir)
    throw new CliError(
      ExitCode.Invalid,
      "--url, --ref and --dir plan one PackageSync: a set's plan is of the revision its template's ref names now",
    );
  const namespace = flags.namespace ?? cluster.contextNamespace;
  const set = await getSet(cluster, namespace, name);
  const parsed = readSetSpec(set.spec);
  if (!parsed.ok) throw new CliError(ExitCode.Invalid, `PackageSyncSet ${namespace}/${name}: ${parsed.message}`);
  const spec = parsed.spec;
  const targets = generateTargets(
    { name, namespace },
    await listClusterSecrets(cluster.client, namespace),
    spec.generators.clusters.selector,
    spec.generators.directories,
  );
  const sources = await openPlanSources(flags);
  try {
    const secrets = new Secrets(cluster.client);
    const { revision, revisionError } = await resolveSetRevision(
      spec.template.spec.source as PackageSync['spec']['source'],
      namespace,
      { source: sources.source!, readSecret: (ns, n) => secrets.read(ns, n) },
      AbortSignal.timeout(2 * 60_000),
    );
    if (!revision)
      throw new CliError(
        ExitCode.Invalid,
        revisionError ? `${revisionError.reason}: ${revisionError.message}` : "the template's ref did not resolve",
      );
    const { plan, unassigned } = rolloutWaves(targets, spec.rollout, set.status, revision);
    const byName = new Map(targets.map((t) => [t.name, t]));
    const waves = [];
    // one target after another: each is a render and a dry run of every object, on a machine others share
    for (const w of plan) {
      const planned: SetPlanTarget[] = [];
      for (const t of w.targets)
        planned.push(await planTarget(cluster, set, spec, byName.get(t)!, revision, flags, sources));
      waves.push({ name: w.name, targets: planned });
    }
    const st = set.status;
    const doc = setPlanDocument(
      {
        packageSyncSet: { namespace, name },
        revision,
        rollout: {
          ...(st?.phase ? { phase: st.phase } : {}),
          ...(st?.revision ? { revision: st.revision } : {}),
          ...(st?.lastGoodRevision ? { lastGoodRevision: st.lastGoodRevision } : {}),
        },
        unassigned,
      },
      waves,
    );
    if (targets.length === 0) process.stderr.write(`${NO_TARGETS}\n`);
    process.stdout.write(render(doc, flags.output));
    return EXIT[setPlanVerdict(doc)];
  } finally {
    await sources.close();
  }
}

function render(doc: SetPlanDocument, output: PlanFlags['output']): string {
  if (output === 'json') return `${JSON.stringify(doc, null, 2)}\n`;
  return renderSetPlan(doc, output === 'markdown' ? MARKDOWN_STYLE(renderPlanMarkdown) : TEXT_STYLE(renderPlanText));
}

async function planTarget(
  cluster: Cluster,
  set: PackageSyncSet,
  spec: SetSpec,
  target: Target,
  revision: string,
  flags: PlanFlags,
  sources: PlanSources,
): Promise<SetPlanTarget> {
  const entry: SetPlanTarget = {
    name: target.name,
    cluster: target.cluster,
    ...(target.directory !== undefined ? { directory: target.directory } : {}),
    child: target.child,
  };
  const { namespace } = set.metadata;
  try {
    // the child exactly as the set controller would apply it for this revision
    const stamped = childObject(setRef(set), spec.template, target, revision);
    const existing = await cluster.packageSyncs.get(namespace, target.child);
    if (existing && !ownedBy(existing as never, set.metadata.uid ?? ''))
      return {
        ...entry,
        error: {
          unreachable: false,
          message: `ChildNameConflict: PackageSync ${namespace}/${target.child} exists and is not this set's: rename or delete it`,
        },
      };
    // its inventory (and annotations others set, such as a prune approval) are the existing child's
    const ps: PackageSync = existing
      ? {
          ...stamped,
          metadata: {
            ...stamped.metadata,
            annotations: { ...existing.metadata.annotations, ...stamped.metadata.annotations },
          },
          ...(existing.status ? { status: existing.status } : {}),
        }
      : stamped;
    const plan = await withTargetObjects(cluster, ps, (objects) => computePlan(cluster, ps, objects, flags, sources));
    return { ...entry, plan };
  } catch (e) {
    // a cluster that does not answer or refuses: the plan is unknown; anything else would fail the child too
    return { ...entry, error: { unreachable: exitCodeOf(e) === ExitCode.Cluster, message: errorMessage(e) } };
  }
}
