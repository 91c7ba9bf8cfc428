/**
 * `packagesync reconcile NAME`, `suspend NAME`, `resume NAME`: the controller's two switches, set the
 * way `kubectl` would set them (an annotation, spec.suspend), and the wait for the controller's answer.
 * The controller copies the annotation's value into status.lastHandledReconcileAt when it reconciles
 * for that request, which is how we tell its answer from an older one.
 */
import { Option, type Command } from 'commander';
import { RECONCILE_REQUESTED_AT, type PackageSync } from '../api/packagesync.ts';
import { RESUME_ANNOTATION } from '../api/packagesyncset.ts';
import { isNotFound } from '../adapters/kube/client.ts';
import { packageSyncCollectionPath } from '../adapters/kube/packagesyncs.ts';
import { conditionOf } from '../core/status.ts';
import { kubeconfigOption, namespaceOption, withCluster, type Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';
import { parseTimeout } from './flags.ts';
import { resumeSet } from './set-actions.ts';
import { setArgument } from './set-ref.ts';

interface SwitchFlags {
  namespace?: string;
  kubeconfig?: string;
  timeout: string;
  wait: boolean;
  wave?: string;
}

const timeoutOption = () =>
  new Option('--timeout <duration>', "how long to wait for the controller's answer").default('5m');

export function registerReconcile(program: Command): void {
  program
    .command('reconcile')
    .summary('reconcile a PackageSync now and wait for the result')
    .description(
      'Ask the controller to reconcile a PackageSync now (the packagesync.io/reconcile-requested-at annotation) ' +
        'and wait for the result. Exit 0 on Ready=True, 1 on Ready=False, 4 on timeout.',
    )
    .argument('<name>', 'the PackageSync')
    .addOption(namespaceOption())
    .addOption(timeoutOption())
    .addOption(kubeconfigOption())
    .action((name: string, flags: SwitchFlags) =>
      answered(flags, async (cluster, namespace, timeoutMs) => {
        const ps = await mustGet(cluster, namespace, name);
        if (ps.spec.suspend)
          throw new CliError(
            ExitCode.Invalid,
            `PackageSync ${namespace}/${name} is suspended: packagesync resume ${name}`,
          );
        const requestedAt = new Date().toISOString();
        await patch(cluster, namespace, name, { metadata: { annotations: { [RECONCILE_REQUESTED_AT]: requestedAt } } });
        return waitForAnswer(cluster, namespace, name, requestedAt, timeoutMs);
      }),
    );

  program
    .command('suspend')
    .summary('stop all work on a PackageSync')
    .description('Stop all work on a PackageSync (spec.suspend: true) until it is resumed.')
    .argument('<name>', 'the PackageSync')
    .addOption(namespaceOption())
    .addOption(kubeconfigOption())
    .action(async (name: string, flags: SwitchFlags) => {
      await withCluster(flags.kubeconfig, async (cluster) => {
        const namespace = flags.namespace ?? cluster.contextNamespace;
        await patch(cluster, namespace, name, { spec: { suspend: true } });
        process.stdout.write(`PackageSync ${namespace}/${name} suspended\n`);
      });
    });

  program
    .command('resume')
    .summary("resume a suspended PackageSync, or a PackageSyncSet's held rollout, and wait for the result")
    .description(
      'Resume a suspended PackageSync (spec.suspend: false), ask for a reconcile at once and wait for the result ' +
        '(exit codes as reconcile). packagesyncset/NAME: its rollout, held for a person, goes on from the wave it ' +
        `holds at (${RESUME_ANNOTATION}=<wave>@<commit>:<you>), waited for until the controller acted on it.`,
    )
    .argument('<name>', 'the PackageSync, or packagesyncset/NAME (pkset/NAME)')
    .addOption(namespaceOption())
    .addOption(new Option('--wave <name>', 'packagesyncset/NAME: the wave it holds at, checked (default: that wave)'))
    .addOption(
      new Option('--no-wait', "return once resumed, without waiting for the controller's answer (default: wait)"),
    )
    .addOption(timeoutOption())
    .addOption(kubeconfigOption())
    .action((name: string, flags: SwitchFlags) =>
      answered(flags, async (cluster, namespace, timeoutMs) => {
        const setName = setArgument(name);
        if (setName !== undefined)
          return resumeSet(cluster, namespace, setName, { wave: flags.wave, wait: flags.wait, timeoutMs });
        const requestedAt = new Date().toISOString();
        // One patch: resumed and requested together, so the first reconcile after resuming is the requested one.
        await patch(cluster, namespace, name, {
          metadata: { annotations: { [RECONCILE_REQUESTED_AT]: requestedAt } },
          spec: { suspend: false },
        });
        process.stderr.write(`PackageSync ${namespace}/${name} resumed\n`);
        return flags.wait ? waitForAnswer(cluster, namespace, name, requestedAt, timeoutMs) : ExitCode.Ok;
      }),
    );
}

/** A command that waits for the controller's answer: `fn` gets the namespace and the budget, returns the exit code. */
async function answered(
  flags: SwitchFlags,
  fn: (cluster: Cluster, namespace: string, timeoutMs: number) => Promise<number>,
): Promise<void> {
  const timeoutMs = parseTimeout(flags.timeout);
  process.exitCode = await withCluster(flags.kubeconfig, (cluster) =>
    fn(cluster, flags.namespace ?? cluster.contextNamespace, timeoutMs),
  );
}

async function mustGet(cluster: Cluster, namespace: string, name: string): Promise<PackageSync> {
  const ps = await cluster.packageSyncs.get(namespace, name);
  if (!ps) throw new CliError(ExitCode.Invalid, `PackageSync ${namespace}/${name} not found`);
  return ps;
}

async function patch(cluster: Cluster, namespace: string, name: string, body: object): Promise<void> {
  try {
    await cluster.client.request('PATCH', `${packageSyncCollectionPath(namespace)}/${encodeURIComponent(name)}`, {
      contentType: 'application/merge-patch+json',
      body,
    });
  } catch (e) {
    if (isNotFound(e)) throw new CliError(ExitCode.Invalid, `PackageSync ${namespace}/${name} not found`);
    throw e;
  }
}

/** Polls until the controller has answered this request with Ready True or False. */
export async function waitForAnswer(
  cluster: Cluster,
  namespace: string,
  name: string,
  requestedAt: string,
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let said = '';
  let ps: PackageSync | undefined;
  for (;;) {
    ps = await cluster.packageSyncs.get(namespace, name);
    if (!ps) throw new CliError(ExitCode.Invalid, `PackageSync ${namespace}/${name} was deleted while waiting`);
    const ready = conditionOf(ps.status, 'Ready');
    const handled = ps.status?.lastHandledReconcileAt === requestedAt;
    if (handled && ready && ready.status !== 'Unknown') {
      process.stdout.write(
        `PackageSync ${namespace}/${name}: Ready=${ready.status} (${ready.reason}) ${ready.message}\n`,
      );
      return ready.status === 'True' ? ExitCode.Ok : ExitCode.No;
    }
    if (handled && ready && ready.message !== said) {
      said = ready.message;
      process.stderr.write(`${ready.reason}: ${ready.message}\n`);
    }
    if (Date.now() >= deadline) {
      throw new CliError(
        ExitCode.Timeout,
        handled
          ? `no result within ${timeoutMs / 1000}s; last: ${ready?.reason}: ${ready?.message}`
          : `the controller did not take up the request within ${timeoutMs / 1000}s: is a controller running ` +
              `whose --watch-namespace and --watch-label-selector include ${namespace}/${name}?`,
      );
    }
    await new Promise((r) => setTimeout(r, Math.min(500, Math.max(0, deadline - Date.now()))));
  }
}
