/**
 * A private control plane for a test that must break the API server (the shared one is never
 * restarted: other suites run on it), or a second cluster for spec.kubeConfig (e2e/remote-cluster.test.ts). hack/cluster.sh with its own directory and free ports; the API
 * server can be killed and started again with the same flags and data.
 */
import { execFile, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

export interface PrivateCluster {
  kubeconfig: string;
  kubectl(...args: string[]): Promise<string>;
  /** SIGKILLs kube-apiserver; `start` brings the same one back. */
  killApiServer(): Promise<void>;
  startApiServer(): Promise<void>;
  down(): Promise<void>;
}

/** `n` ports free on loopback now (the OS picks them; a fixed port could be another engineer's). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, async () => {
      const s = createServer();
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
      return s;
    }),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

export const PORT_VARS = [
  'ETCD_CLIENT_PORT',
  'ETCD_PEER_PORT',
  'APISERVER_PORT',
  'KCM_PORT',
  'SCHEDULER_PORT',
  'KWOK_PORT',
];

export interface PrivateClusterOptions {
  /**
   * Read `${envPrefix}CLUSTER_DIR` and `${envPrefix}<port variable>` (e.g. SECOND_APISERVER_PORT) from the
   * environment: a machine running several suites at once pins them; unset ones are a fresh temporary directory
   * and free ephemeral ports, which never collide with the shared cluster's (whose defaults are fixed ports).
   */
  envPrefix?: string;
}

export async function startPrivateCluster(opts: PrivateClusterOptions = {}): Promise<PrivateCluster> {
  const given = (name: string) => (opts.envPrefix ? process.env[`${opts.envPrefix}${name}`] : undefined) || undefined;
  const givenDir = given('CLUSTER_DIR');
  const dir = givenDir ?? (await mkdtemp(join(tmpdir(), 'psync-private-cluster-')));
  const free = await freePorts(PORT_VARS.length);
  const env: NodeJS.ProcessEnv = { ...process.env, CLUSTER_DIR: dir };
  PORT_VARS.forEach((v, i) => (env[v] = given(v) ?? String(free[i])));
  const cluster = (cmd: string) => run(join(root, 'hack/cluster.sh'), [cmd], { env, maxBuffer: 16 << 20 });
  const removeDir = () => (givenDir ? Promise.resolve() : rm(dir, { recursive: true, force: true }));
  try {
    await cluster('up');
  } catch (e) {
    // fail loudly: the script's own account of what did not start (it prints the failing log's tail)
    const out = e as { stderr?: string };
    await cluster('down').catch(() => undefined);
    await removeDir();
    throw new Error(
      `hack/cluster.sh up (CLUSTER_DIR=${dir}, APISERVER_PORT=${env.APISERVER_PORT}) failed:\n${out.stderr ?? String(e)}`,
      {
        cause: e,
      },
    );
  }
  const kubeconfig = join(dir, 'kubeconfig');
  const kubectl = async (...args: string[]) =>
    (await run(inject('kubectl'), ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 64 << 20 })).stdout;
  const apiServer = apiServerControl(dir, kubectl);
  return {
    kubeconfig,
    kubectl,
    killApiServer: apiServer.kill,
    startApiServer: apiServer.start,
    async down() {
      await cluster('down').catch(() => undefined);
      await removeDir();
    },
  };
}

/**
 * The kube-apiserver hack/cluster.sh started in `dir`: `kill` SIGKILLs it, `start` runs it again with the same
 * argv and data, recording its pid where `cluster.sh down` looks.
 */
export function apiServerControl(
  dir: string,
  kubectl: (...args: string[]) => Promise<string>,
): { kill(): Promise<void>; start(): Promise<void> } {
  const pidFile = join(dir, 'pids/kube-apiserver.pid');
  let argv: string[] = [];
  return {
    async kill() {
      const pid = Number((await readFile(pidFile, 'utf8')).trim());
      argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
      process.kill(pid, 'SIGKILL');
      while (await alive(pid)) await new Promise((r) => setTimeout(r, 50));
    },
    async start() {
      const log = openSync(join(dir, 'logs/kube-apiserver.log'), 'a');
      const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ['ignore', log, log] });
      child.unref();
      await writeFile(pidFile, `${child.pid}\n`); // so that `cluster.sh down` stops this one
      for (let i = 0; i < 600; i++) {
        if (
          await kubectl('get', '--raw', '/readyz').then(
            () => true,
            () => false,
          )
        )
          return;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`the restarted kube-apiserver of ${dir} did not become ready`);
    },
  };
}

async function alive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    return !/^\d+ \([^)]*\) Z/.test(stat); // a zombie is dead
  } catch {
    return false;
  }
}
