/**
 * The CLI's connection to a cluster: the same adapters the controller uses (raw-JSON client, discovery,
 * server-side apply, PackageSync reads and writes), authenticated as the person running the command.
 */
import { Option } from 'commander';
import { KubeClient } from '../adapters/kube/client.ts';
import { Discovery } from '../adapters/kube/discovery.ts';
import { Objects } from '../adapters/kube/objects.ts';
import { PackageSyncs } from '../adapters/kube/packagesyncs.ts';

export interface Cluster {
  client: KubeClient;
  discovery: Discovery;
  objects: Objects;
  packageSyncs: PackageSyncs;
  /** The kubeconfig context's namespace, or `default`, as kubectl picks it. */
  contextNamespace: string;
  close(): Promise<void>;
}

// Options without a fixed default say in their description what applies instead: commander shows
// "(default: …)" only for options that have a value.
export const kubeconfigOption = () =>
  new Option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)');

export const namespaceOption = () =>
  new Option('-n, --namespace <ns>', "namespace of the PackageSync (default: the kubeconfig context's, or default)");

export async function connect(kubeconfig: string | undefined): Promise<Cluster> {
  const client = await KubeClient.create({ kubeconfig });
  const discovery = new Discovery(client);
  const contextNamespace = client.config.namespace || 'default';
  return {
    client,
    discovery,
    objects: new Objects(client, discovery),
    packageSyncs: new PackageSyncs(client, 'packagesync-cli'),
    contextNamespace,
    close: () => client.close(),
  };
}

/** Runs `body` with a connection, closing the connection pool afterwards so the process can exit. */
export async function withCluster<T>(kubeconfig: string | undefined, body: (c: Cluster) => Promise<T>): Promise<T> {
  const cluster = await connect(kubeconfig);
  try {
    return await body(cluster);
  } finally {
    await cluster.close();
  }
}
