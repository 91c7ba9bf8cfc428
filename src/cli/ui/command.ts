/**
 * `packagesync ui`: the web UI on this machine, with the user's own kubeconfig (RBAC decides what they see and
 * may do; docs/ui.md, docs/adr/0036). Loopback only unless `--address` says otherwise.
 */
import { Option, type Command } from 'commander';
import { kubeconfigOption, withCluster } from '../cluster.ts';
import { CliError, ExitCode } from '../exit-codes.ts';
import { isLoopback } from './security.ts';
import { startUiServer } from './server.ts';
import { repoPath } from '../../config/repo-root.ts';

interface UiFlags {
  address?: string;
  allowInsecureHttp: boolean;
  port: string;
  namespace?: string;
  kubeconfig?: string;
}

/** Where `npm run build:ui` (web/build.ts) writes the bundle. */
export const UI_ASSETS_DIR = repoPath('dist/ui');

export function registerUi(program: Command): void {
  program
    .command('ui')
    .summary('the web UI: the fleet, each PackageSync, reconcile/suspend/resume, live')
    .description(
      'Serve the web UI on 127.0.0.1 with your kubeconfig: what you may list, you see; what you may patch, you ' +
        'may do. Stops on Ctrl-C.',
    )
    .addOption(new Option('--port <port>', 'port to listen on (0: any free port)').default('0'))
    .addOption(
      new Option(
        '--address <address>',
        'address to listen on; anything but loopback exposes your credentials to the network (default: 127.0.0.1)',
      ),
    )
    .addOption(new Option('-n, --namespace <ns>', 'only this namespace (default: all namespaces)'))
    .addOption(
      new Option(
        '--allow-insecure-http',
        'let the Plan button fetch an http:// git URL, as plan --allow-insecure-http',
      ).default(false),
    )
    .addOption(kubeconfigOption())
    .action(async (flags: UiFlags) => {
      const port = Number(flags.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new CliError(ExitCode.Invalid, `--port: ${flags.port} is not a port number`);
      const address = flags.address ?? '127.0.0.1';
      if (!isLoopback(address))
        process.stderr.write(
          `warning: listening on ${address}: anyone who reaches it acts with your kubeconfig's identity\n`,
        );
      await withCluster(flags.kubeconfig, async (cluster) => {
        const server = await startUiServer({
          cluster,
          address,
          port,
          namespace: flags.namespace,
          assetsDir: UI_ASSETS_DIR,
          kubeconfigPath: flags.kubeconfig,
          planArgs: flags.allowInsecureHttp ? ['--allow-insecure-http'] : [],
        });
        process.stdout.write(`PackageSync UI: ${server.url}\n`);
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        await server.close();
      });
    });
}
