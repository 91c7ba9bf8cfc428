/**
 * A person's two moves on a PackageSyncSet's rollout (docs/adr/0042), written as the annotations the controller
 * reads: `packagesync approve SET --wave W` (packagesync.io/approve, a wave's approval gate) and
 * `packagesync resume packagesyncset/SET` (packagesync.io/resume, a held rollout goes on). Both name the revision
 * the set is rolling out now, so an approval never carries over to a newer revision, and both are signed with the
 * caller's name as the API server knows it (a SelfSubjectReview); deploy/optional/approver-policy.yaml makes the
 * API server refuse any other name.
 */
import { Option, type Command } from 'commander';
import {
  APPROVE_ANNOTATION,
  RESUME_ANNOTATION,
  setCollectionPath,
  type PackageSyncSet,
} from '../api/packagesyncset.ts';
import { isNotFound } from '../adapters/kube/client.ts';
import { callerName } from '../adapters/kube/self-subject-review.ts';
import { resumeAnnotation } from '../core/rollout/resume.ts';
import { approvalAnnotation } from '../core/rollout/step.ts';
import { kubeconfigOption, withCluster, type Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';
import { getSet, setArgument } from './set-ref.ts';

const setNamespaceOption = () =>
  new Option('-n, --namespace <ns>', "namespace of the PackageSyncSet (default: the kubeconfig context's, or default)");

interface ApproveFlags {
  wave: string;
  namespace?: string;
  kubeconfig?: string;
}

export function registerApprove(program: Command): void {
  program
    .command('approve')
    .summary("pass a wave's approval gate in a PackageSyncSet's rollout")
    .description(
      `Approve WAVE of the revision the PackageSyncSet is rolling out now: sets ${APPROVE_ANNOTATION}=` +
        '<wave>@<commit>:<you>, your name as the API server tells it (a SelfSubjectReview). The controller records ' +
        'it in status.waves[].approvedBy when the gate passes. Exit 0: written, 2: no such set, wave or rollout, ' +
        '3: the cluster refused.',
    )
    .argument('<set>', 'the PackageSyncSet: NAME or packagesyncset/NAME')
    .addOption(new Option('--wave <name>', 'the wave whose approval gate passes (required)').makeOptionMandatory())
    .addOption(setNamespaceOption())
    .addOption(kubeconfigOption())
    .action(async (arg: string, flags: ApproveFlags) => {
      process.exitCode = await withCluster(flags.kubeconfig, async (cluster) => {
        const namespace = flags.namespace ?? cluster.contextNamespace;
        const name = setArgument(arg) ?? arg;
        const set = await getSet(cluster, namespace, name);
        const revision = set.status?.revision;
        if (!revision)
          throw new CliError(
            ExitCode.Invalid,
            `PackageSyncSet ${namespace}/${name} rolls out no revision yet (status.revision is empty): nothing to approve`,
          );
        const wave = (set.spec.rollout?.waves ?? []).find((w) => w.name === flags.wave);
        if (!wave)
          throw new CliError(
            ExitCode.Invalid,
            `PackageSyncSet ${namespace}/${name} has no wave ${flags.wave}; its waves: ${(set.spec.rollout?.waves ?? []).map((w) => w.name).join(', ')}`,
          );
        if (!wave.gates?.some((g) => g.approval))
          throw new CliError(
            ExitCode.Invalid,
            `wave ${flags.wave} of PackageSyncSet ${namespace}/${name} has no approval gate: nothing waits for an approval`,
          );
        const value = approvalAnnotation(flags.wave, revision, await callerName(cluster.client));
        await annotate(cluster, set, APPROVE_ANNOTATION, value);
        process.stdout.write(
          `PackageSyncSet ${namespace}/${name}: wave ${flags.wave} of ${revision} approved (${APPROVE_ANNOTATION}=${value})\n`,
        );
        return ExitCode.Ok;
      });
    });
}

export interface ResumeSetFlags {
  wave?: string;
  wait: boolean;
  timeoutMs: number;
}

/** `resume packagesyncset/NAME`: the held rollout goes on from the wave it holds at, waited for unless --no-wait. */
export async function resumeSet(
  cluster: Cluster,
  namespace: string,
  name: string,
  flags: ResumeSetFlags,
): Promise<number> {
  const set = await getSet(cluster, namespace, name);
  const st = set.status;
  const held = st?.blockedBy?.wave;
  if (st?.phase !== 'Holding' || !st.revision || !held)
    throw new CliError(
      ExitCode.Invalid,
      `PackageSyncSet ${namespace}/${name} is not holding (phase ${st?.phase ?? 'none'}): nothing to resume`,
    );
  if (flags.wave !== undefined && flags.wave !== held)
    throw new CliError(
      ExitCode.Invalid,
      `PackageSyncSet ${namespace}/${name} holds at wave ${held}, not ${flags.wave}`,
    );
  // as the web UI writes it: a value the controller has not handled yet, even when the same person resumes the
  // same wave of the same revision after it held again (core/rollout/resume.ts)
  const value = resumeAnnotation(st, held, st.revision, await callerName(cluster.client));
  await annotate(cluster, set, RESUME_ANNOTATION, value);
  process.stderr.write(
    `PackageSyncSet ${namespace}/${name}: wave ${held} of ${st.revision} resumed (${RESUME_ANNOTATION}=${value})\n`,
  );
  if (!flags.wait) return ExitCode.Ok;
  const deadline = Date.now() + flags.timeoutMs;
  for (;;) {
    const now = await getSet(cluster, namespace, name);
    if (now.status?.lastHandledResume === value) {
      process.stdout.write(`PackageSyncSet ${namespace}/${name}: ${now.status.phase} ${now.status.message ?? ''}\n`);
      return ExitCode.Ok;
    }
    if (Date.now() >= deadline)
      throw new CliError(
        ExitCode.Timeout,
        `the controller did not act on the resume within ${flags.timeoutMs / 1000}s: is a controller running ` +
          `whose --watch-namespace and --watch-label-selector include ${namespace}/${name}?`,
      );
    await new Promise((r) => setTimeout(r, Math.min(500, Math.max(0, deadline - Date.now()))));
  }
}

/** One annotation, as `kubectl annotate --overwrite` sets it. */
async function annotate(cluster: Cluster, set: PackageSyncSet, key: string, value: string): Promise<void> {
  const { namespace, name } = set.metadata;
  try {
    await cluster.client.request('PATCH', `${setCollectionPath(namespace)}/${encodeURIComponent(name)}`, {
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { [key]: value } } },
    });
  } catch (e) {
    if (isNotFound(e)) throw new CliError(ExitCode.Invalid, `PackageSyncSet ${namespace}/${name} not found`);
    throw e;
  }
}
