/**
 * The UI served by the controller's own process when `--ui-address` is set (off by default; docs/ui.md,
 * docs/adr/0039): one shared watch of PackageSyncs as the controller, and every read and action as the request's
 * own bearer token (access.ts), so Kubernetes RBAC decides and a request the API server does not authenticate gets
 * nothing. It runs on every replica, leader or not: it only reads, and its actions are patches any replica may send.
 */
import { parseBindAddress } from '../../server/http.ts';
import { connect } from '../cluster.ts';
import { TokenAccess } from './access.ts';
import { UI_ASSETS_DIR } from './command.ts';
import { startUiServer, type UiServer } from './server.ts';

export interface InClusterUiOptions {
  /** The controller's kubeconfig (unset: in-cluster): the shared watch's identity and where the API server is. */
  kubeconfig?: string;
  /** `host:port` or `:port` (all interfaces). */
  bindAddress: string;
  /** --ui-auth-proxy-identity: the identity whose X-Remote-User / X-Remote-Group headers are believed. */
  authProxyIdentity?: string;
  /** --watch-namespace: the UI lists no more than the controller watches. */
  namespace?: string;
  assetsDir?: string;
  /** The controller's own flags the Plan button's `packagesync plan` needs to see the package as it does. */
  planArgs?: string[];
}

export async function startInClusterUi(opts: InClusterUiOptions): Promise<UiServer> {
  const bind = parseBindAddress(opts.bindAddress);
  if (!bind) throw new Error('--ui-address: the UI is off (0)');
  const cluster = await connect(opts.kubeconfig);
  try {
    const access = new TokenAccess({
      server: cluster.client.config,
      discovery: cluster.discovery,
      authProxyIdentity: opts.authProxyIdentity,
      // a proxied viewer's plan, once RBAC allows it, runs as the controller (plan-identity.ts)
      serverKubeconfigArgs: opts.kubeconfig ? ['--kubeconfig', opts.kubeconfig] : [],
    });
    const server = await startUiServer({
      cluster,
      access,
      address: bind.host ?? '0.0.0.0',
      port: bind.port,
      namespace: opts.namespace,
      assetsDir: opts.assetsDir ?? UI_ASSETS_DIR,
      planArgs: opts.planArgs,
    });
    return {
      url: server.url,
      close: async () => {
        await server.close();
        await cluster.close();
      },
    };
  } catch (e) {
    await cluster.close();
    throw e;
  }
}
