/**
 * Target clusters for PackageSyncSet e2e (issue 31): extra real kube-apiservers that share the local control
 * plane's etcd, each under its own --etcd-prefix, with its own PKI, ports and directory — `hack/cluster.sh up` in
 * its member mode (ETCD_SERVERS set), so the flags are the local plane's. Each runs a controller-manager with only
 * the controllers a Deployment's health needs and kwok (Node and Pods Ready; hack/kwok-stages apply); no scheduler,
 * so workloads meant for them name their Node (`kwok-node-0`). Registered as labelled kubeconfig Secrets, as the
 * set's cluster generator reads them. `down` stops the processes and deletes each prefix from etcd.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { KubeClient } from '../../src/adapters/kube/client.ts';
import { kube, kubeconfig as localKubeconfig } from './cluster.ts';
import { apiServerControl, freePorts, PORT_VARS } from './private-cluster.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
/** What a Deployment needs to become ready, and no more (2 shared cores). */
const MEMBER_CONTROLLERS = 'deployment,replicaset,serviceaccount,serviceaccount-token';
export const MEMBER_NODE = 'kwok-node-0';

export interface MemberCluster {
  name: string;
  kubeconfig: string;
  /** The kubeconfig's text (inline certificates), as a cluster Secret's value. */
  kubeconfigText: string;
  client: KubeClient;
  kubectl(...args: string[]): Promise<string>;
  /** SIGKILLs its kube-apiserver (unreachable until startApiServer). */
  stopApiServer(): Promise<void>;
  startApiServer(): Promise<void>;
}

export interface Fleet {
  members: MemberCluster[];
  down(): Promise<void>;
}

/**
 * The local plane's etcd: PACKAGESYNC_TEST_ETCD, else the --etcd-servers of the kube-apiserver hack/cluster.sh
 * started beside the suite's kubeconfig (pids/ next to it).
 */
async function localEtcd(): Promise<string> {
  if (process.env.PACKAGESYNC_TEST_ETCD) return process.env.PACKAGESYNC_TEST_ETCD;
  const pidFile = join(dirname(localKubeconfig()), 'pids/kube-apiserver.pid');
  try {
    const pid = (await readFile(pidFile, 'utf8')).trim();
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    const flag = argv.find((a) => a.startsWith('--etcd-servers='));
    if (flag) return flag.slice('--etcd-servers='.length);
  } catch {
    // fall through to the error below
  }
  throw new Error(
    `member clusters share the local control plane's etcd: none found from ${pidFile}; set PACKAGESYNC_TEST_ETCD`,
  );
}

export async function startFleet(names: string[]): Promise<Fleet> {
  const etcd = await localEtcd();
  const runId = randomBytes(3).toString('hex');
  const started: { env: NodeJS.ProcessEnv; dir: string }[] = [];
  const script = join(root, 'hack/cluster.sh');
  const down = async () => {
    await Promise.all(
      started.map(async ({ env, dir }) => {
        await run(script, ['down'], { env }).catch(() => undefined);
        await rm(dir, { recursive: true, force: true });
      }),
    );
  };
  const members: MemberCluster[] = [];
  try {
    // one after another: three API servers starting at once on two shared cores time each other out
    for (const name of names) {
      const dir = await mkdtemp(join(tmpdir(), `psync-member-${name}-`));
      const free = await freePorts(PORT_VARS.length);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        CLUSTER_DIR: dir,
        ETCD_SERVERS: etcd,
        ETCD_PREFIX: `/e2e-fleet-${runId}-${name}`,
        KCM_CONTROLLERS: MEMBER_CONTROLLERS,
        NODE_NAME: MEMBER_NODE,
      };
      PORT_VARS.forEach((v, i) => (env[v] = String(free[i])));
      started.push({ env, dir });
      await run(script, ['up'], { env, maxBuffer: 16 << 20 }).catch((e: { stderr?: string }) => {
        throw new Error(`hack/cluster.sh up for member ${name} (CLUSTER_DIR=${dir}) failed:\n${e.stderr ?? e}`);
      });
      members.push(await member(name, dir));
    }
  } catch (e) {
    await Promise.all(members.map((m) => m.client.close()));
    await down();
    throw e;
  }
  return {
    members,
    async down() {
      await Promise.all(members.map((m) => m.client.close()));
      await down();
    },
  };
}

async function member(name: string, dir: string): Promise<MemberCluster> {
  const kubeconfig = join(dir, 'kubeconfig');
  const kubectl = async (...args: string[]) =>
    (await run(inject('kubectl'), ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 64 << 20 })).stdout;
  const apiServer = apiServerControl(dir, kubectl);
  return {
    name,
    kubeconfig,
    kubeconfigText: readFileSync(kubeconfig, 'utf8'),
    client: await KubeClient.create({ kubeconfig }),
    kubectl,
    stopApiServer: apiServer.kill,
    startApiServer: apiServer.start,
  };
}

/** Registers `m` in namespace `ns` of the local plane: a kubeconfig Secret labelled as a cluster, plus `labels`. */
export async function registerCluster(
  ns: string,
  name: string,
  kubeconfigText: string,
  labels: Record<string, string> = {},
): Promise<void> {
  await (
    await kube()
  ).request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: {
      metadata: { name, labels: { 'packagesync.io/secret-type': 'cluster', ...labels } },
      stringData: { value: kubeconfigText },
    },
  });
}

/** The local plane itself as a target: its admin kubeconfig. */
export const localKubeconfigText = (): string => readFileSync(localKubeconfig(), 'utf8');
