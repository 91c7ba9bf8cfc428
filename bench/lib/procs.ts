/**
 * The controllers under test as child processes: PackageSync (`node dist/controller/main.js controller`, as the image runs it) and Flux's
 * source-controller + kustomize-controller (binaries from bench/build-flux.sh). Memory is read from
 * /proc/<pid>/status: VmHWM is the kernel's own peak-RSS mark, so no sampling interval can miss a peak.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { BENCH_LABEL } from './units.ts';
import { metricValue, root, sumCounter, workDir, type VerbCounts } from './cluster.ts';

export interface Proc {
  name: string;
  child: ChildProcess;
  /** http://127.0.0.1:PORT/metrics of the process. */
  metricsUrl: string;
  /** When it was launched (ms since the epoch). */
  launchedAt: number;
  stop(): Promise<void>;
}

/** Every controller launched and not yet exited: killed when the harness itself ends, however it ends. */
const running = new Set<ChildProcess>();
let reaping = false;
function reapOnExit(): void {
  if (reaping) return;
  reaping = true;
  const killAll = () => {
    for (const c of running) c.kill('SIGKILL');
  };
  process.once('exit', killAll);
  // a harness stopped with ^C or kill: a controller left running would serve the next run's port and keep
  // reconciling the fleet (it once answered the next run's readiness probe while the new one exited)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.once(signal, () => {
      killAll();
      process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
    });
}

/**
 * Whether /metrics was answered by a process started well before `launchedAt` (its process_start_time_seconds):
 * another process holds the port, not the one just launched. Undefined when the metric is not there.
 */
export function servedByAnother(metrics: string, launchedAt: number): boolean | undefined {
  const started = metricValue(metrics, 'process_start_time_seconds'); // 0: not there
  return started === 0 ? undefined : started * 1000 < launchedAt - 5_000;
}

export interface Memory {
  /** Peak resident set since start, MiB. */
  peakMiB: number;
  /** Resident set now, MiB. */
  rssMiB: number;
}

export function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { peakMiB: kib('VmHWM') / 1024, rssMiB: kib('VmRSS') / 1024 };
}

/** A process and every descendant of it now (the PackageSync controller and its render workers). */
export function treePids(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      parent.set(Number(e), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const [p, pp] of parent) if (pp === tree[i]) tree.push(p);
  return tree;
}

/**
 * A process with every descendant (the PackageSync controller's render workers): each one's peak (VmHWM) by name,
 * read now. Their sum is an upper bound of the tree's peak: the workers are long-lived, so their peaks are kept,
 * and each worker's RSS counts the pages of the binary they all map (~30 MiB of the render worker's) again.
 */
/**
 * A process's name: its comm, which the kernel cuts at 15 characters, so a name that long is taken from its
 * command line instead when that begins with it (render-worker-kustomize, not render-worker-k).
 */
export function processName(pid: number): string {
  const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  if (comm.length < 15) return comm;
  const argv0 = basename(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '');
  return argv0.startsWith(comm) ? argv0 : comm;
}

export function treeMemoryOf(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of treePids(pid)) {
    try {
      const name = p === pid ? 'controller' : processName(p);
      out[name] = (out[name] ?? 0) + memoryOf(p).peakMiB;
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** A process's resident pages now, MiB (smaps_rollup): its own, and those it shares with other processes. */
export function residentOf(pid: number): { privateMiB: number; sharedMiB: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kib = (f: string) => Number(new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0);
  return {
    privateMiB: (kib('Private_Clean') + kib('Private_Dirty')) / 1024,
    sharedMiB: (kib('Shared_Clean') + kib('Shared_Dirty')) / 1024,
  };
}

/**
 * The peak of a tool's resident memory with the pages its processes share counted once, sampled (the kernel keeps
 * no such peak): per binary (the processes of one name), their private pages plus the most any one of them shares.
 * The VmHWM sum counts a shared page once per process, and the render workers all map one binary (~30 MiB of it
 * resident in each). Not PSS: that would split the controller's node pages with the bench harness's own node.
 * A sample can miss a spike between two reads.
 */
export class PeakFootprint {
  private peak = 0;
  private atPeak: Record<string, number> = {};
  private readonly timer: NodeJS.Timeout;

  /** `roots`: each tool process by the name its figures go under; their descendants go under their own names. */
  constructor(roots: () => { name: string; pid: number }[], everyMs = 500) {
    this.timer = setInterval(() => {
      const byName = new Map<string, { privateMiB: number; sharedMiB: number }>();
      for (const root of roots())
        for (const p of treePids(root.pid)) {
          try {
            const name = p === root.pid ? root.name : processName(p);
            const r = residentOf(p);
            const g = byName.get(name) ?? { privateMiB: 0, sharedMiB: 0 };
            byName.set(name, {
              privateMiB: g.privateMiB + r.privateMiB,
              sharedMiB: Math.max(g.sharedMiB, r.sharedMiB),
            });
          } catch {
            // gone meanwhile
          }
        }
      const now = Object.fromEntries([...byName].map(([k, v]) => [k, v.privateMiB + v.sharedMiB]));
      const sum = Object.values(now).reduce((a, b) => a + b, 0);
      if (sum > this.peak) {
        this.peak = sum;
        this.atPeak = now;
      }
    }, everyMs);
    this.timer.unref();
  }

  /** Stops sampling: the highest sum seen and its parts by process name. */
  stop(): { peakMiB: number; perProcessMiB: Record<string, number> } {
    clearInterval(this.timer);
    return { peakMiB: this.peak, perProcessMiB: this.atPeak };
  }
}

/**
 * A V8 heap snapshot of a controller started with `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=<dir>` (bench/run.ts
 * --heap-snapshot): sends the signal and waits until the new file stops growing. The process stops for seconds
 * meanwhile, and keeps ~the snapshot's size of RSS afterwards (bench/HISTORY.md, session 7): take it last.
 */
export async function heapSnapshot(proc: Proc, dir: string, timeoutMs = 300_000): Promise<string> {
  const before = new Set(readdirSync(dir));
  proc.child.kill('SIGUSR2');
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    const size = statSync(join(dir, file)).size;
    if (size > 0 && size === last) return join(dir, file);
    last = size;
  }
  throw new Error(`no heap snapshot from ${proc.name} within ${timeoutMs / 1000} s`);
}

function launch(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv, metricsPort: number): Proc {
  mkdirSync(join(workDir, 'logs'), { recursive: true });
  const log = createWriteStream(join(workDir, 'logs', `${name}.log`));
  reapOnExit();
  const launchedAt = Date.now();
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  return {
    name,
    child,
    launchedAt,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** Waits until the process serves /metrics (it is up and its HTTP server listens). */
export async function waitServing(p: Proc, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (p.child.exitCode !== null) throw new Error(`${p.name} exited with ${p.child.exitCode}`);
    const res = await fetch(p.metricsUrl).catch(() => undefined); // undefined: not listening yet
    if (res?.ok) {
      if (servedByAnother(await res.text(), p.launchedAt))
        throw new Error(
          `${p.metricsUrl} is served by another process, not ${p.name}: one left over from an earlier run?`,
        );
      return;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${p.name} did not serve ${p.metricsUrl} within ${timeoutMs} ms`);
}

export async function scrape(p: Proc): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(p.metricsUrl);
      return await res.text();
    } catch (e) {
      // a kept-alive connection the server closed just as it was reused: ask again on a new one
      if (attempt >= 3) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export interface PackageSyncOptions {
  kubeconfig: string;
  concurrency: number;
  metricsPort: number;
  webhookPort?: number;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeArgs?: string[];
  tag: string;
  /** More controller flags (the soak: --leader-elect, --git-cache-max-bytes). */
  extraArgs?: string[];
  /** Use and keep the git cache of an earlier process (a restart keeps its emptyDir); default: a fresh one. */
  sharedCache?: string;
}

/** The node flags of the image's ENTRYPOINT (between "node" and the script): the bench runs what ships. */
export function imageNodeFlags(): string[] {
  const line = readFileSync(resolve(root, 'Dockerfile'), 'utf8')
    .split('\n')
    .findLast((l) => l.startsWith('ENTRYPOINT '));
  const argv = JSON.parse(line!.slice('ENTRYPOINT '.length)) as string[];
  return argv.slice(1, -1);
}

/**
 * The checkout whose controller runs: this one, or BENCH_CONTROLLER_ROOT (another worktree, with its own
 * node_modules) to compare two commits under the same harness, back to back on the same plane.
 */
export const controllerRoot = (): string => resolve(process.env.BENCH_CONTROLLER_ROOT ?? root);

let entry: string | undefined;
/**
 * The script the image's ENTRYPOINT runs, in the controller's checkout: its bundle of src/ (docs/adr/0052), built
 * there once per bench run; src/main.ts for a checkout from before the bundle (BENCH_CONTROLLER_ROOT).
 */
export function controllerEntry(): string {
  if (entry) return entry;
  const dir = controllerRoot();
  const builder = resolve(dir, 'hack/build-controller.ts');
  if (!existsSync(builder)) return (entry = resolve(dir, 'src/main.ts'));
  execFileSync(process.execPath, [builder], { cwd: dir, stdio: 'inherit' });
  return (entry = resolve(dir, 'dist/controller/main.js'));
}

export const gitCacheDir = (tag: string): string => join(workDir, `git-cache-${tag}`);

export function startPackageSync(o: PackageSyncOptions): Proc {
  const cache = gitCacheDir(o.sharedCache ?? o.tag);
  if (!o.sharedCache) rmSync(cache, { recursive: true, force: true });
  const args = [
    ...imageNodeFlags(),
    ...(o.nodeArgs ?? []),
    controllerEntry(),
    'controller',
    '--kubeconfig',
    o.kubeconfig,
    '--allow-insecure-http',
    // only the harness's own PackageSyncs: the smoke run shares the cluster with the e2e suite
    '--watch-label-selector',
    `${BENCH_LABEL}=true`,
    '--allow-cross-namespace-objects',
    '--git-cache-dir',
    cache,
    '--concurrency',
    String(o.concurrency),
    '--metrics-bind-address',
    `127.0.0.1:${o.metricsPort}`,
    '--health-probe-bind-address',
    '0',
    ...(o.webhookPort ? ['--webhook-bind-address', `127.0.0.1:${o.webhookPort}`] : []),
    '--log-level',
    'warn',
    ...(o.extraArgs ?? []),
  ];
  return launch(`packagesync-${o.tag}`, process.execPath, args, { ...process.env }, o.metricsPort);
}

/** API requests the PackageSync controller made, by verb, from its own packagesync_api_requests_total. */
export function packageSyncRequests(metrics: string): VerbCounts {
  return sumCounter(metrics, 'packagesync_api_requests_total', 'verb');
}

/**
 * The PackageSync controller's writes (`verb resource`, e.g. `PATCH configmaps`), from the resource label of its
 * packagesync_api_requests_total: every POST, PUT, PATCH and DELETE but access reviews, which are questions
 * (may I?) sent as a POST, not writes.
 */
export function packageSyncWrites(metrics: string): VerbCounts {
  const out: VerbCounts = {};
  for (const m of metrics.matchAll(/^packagesync_api_requests_total\{([^}]*)\} ([0-9.e+]+)$/gm)) {
    const label = (k: string) => new RegExp(`(?:^|,)${k}="([^"]*)"`).exec(m[1]!)?.[1] ?? '';
    const verb = label('verb');
    const resource = label('resource');
    if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(verb) || resource.endsWith('accessreviews')) continue;
    const key = `${verb} ${resource}`;
    out[key] = (out[key] ?? 0) + Number(m[2]);
  }
  return out;
}

/** API requests a Flux controller made, by HTTP method, from controller-runtime's rest_client_requests_total. */
export function fluxRequests(metrics: string): VerbCounts {
  return sumCounter(metrics, 'rest_client_requests_total', 'method');
}

export interface FluxOptions {
  kubeconfig: string;
  sourceDir: string;
  kustomizeDir: string;
  concurrency: number;
  tag: string;
}

export const FLUX_PORTS = {
  storage: 19090,
  sourceMetrics: 18080,
  sourceHealth: 18081,
  kMetrics: 18082,
  kHealth: 18083,
  hMetrics: 18084,
  hHealth: 18085,
};

/** source-controller serves artifacts on loopback; kustomize-controller downloads them from there. */
/** The Helm fleet's Flux: source-controller (the GitRepository and the HelmChart) and helm-controller. */
export function startFluxHelm(o: Omit<FluxOptions, 'kustomizeDir'> & { helmDir: string }): Proc[] {
  const { source } = startFluxProcs({ ...o, kustomizeDir: '' }, false);
  const p = FLUX_PORTS;
  const helm = launch(
    `helm-controller-${o.tag}`,
    join(o.helmDir, 'helm-controller'),
    [...fluxFlags(o), `--metrics-addr=127.0.0.1:${p.hMetrics}`, `--health-addr=127.0.0.1:${p.hHealth}`],
    { ...process.env, HOME: workDir, KUBECONFIG: o.kubeconfig, RUNTIME_NAMESPACE: 'flux-system' },
    p.hMetrics,
  );
  return [source, helm];
}

export function startFlux(o: FluxOptions): { source: Proc; kustomize: Proc } {
  const { source, kustomize } = startFluxProcs(o, true);
  return { source, kustomize: kustomize! };
}

function fluxFlags(o: { concurrency: number }): string[] {
  return [
    // controller-runtime takes the kubeconfig from $KUBECONFIG (these binaries have no --kubeconfig flag)
    `--concurrent=${o.concurrency}`,
    '--log-level=error',
    '--watch-all-namespaces=true',
    // Flux's own benchmark settings: dependants are re-checked quickly
    '--requeue-dependency=5s',
    // Flux's vertical-scaling guide for hundreds of applications: the default client-side limit (50 qps,
    // burst 300) would throttle Flux below what the API server serves; PackageSync has no such limit
    '--kube-api-qps=500',
    '--kube-api-burst=1000',
  ];
}

function startFluxProcs(o: FluxOptions, withKustomize: boolean): { source: Proc; kustomize?: Proc } {
  const storage = join(workDir, `flux-storage-${o.tag}`);
  rmSync(storage, { recursive: true, force: true });
  mkdirSync(storage, { recursive: true });
  const common = fluxFlags(o);
  const env = { ...process.env, HOME: workDir, KUBECONFIG: o.kubeconfig };
  const p = FLUX_PORTS;
  const source = launch(
    `source-controller-${o.tag}`,
    join(o.sourceDir, 'source-controller'),
    [
      ...common,
      `--storage-path=${storage}`,
      `--storage-addr=127.0.0.1:${p.storage}`,
      `--storage-adv-addr=127.0.0.1:${p.storage}`,
      `--metrics-addr=127.0.0.1:${p.sourceMetrics}`,
      `--health-addr=127.0.0.1:${p.sourceHealth}`,
    ],
    { ...env, RUNTIME_NAMESPACE: 'flux-system', TUF_ROOT: join(storage, 'tuf') },
    p.sourceMetrics,
  );
  if (!withKustomize) return { source };
  const kustomize = launch(
    `kustomize-controller-${o.tag}`,
    join(o.kustomizeDir, 'kustomize-controller'),
    [...common, `--metrics-addr=127.0.0.1:${p.kMetrics}`, `--health-addr=127.0.0.1:${p.kHealth}`],
    { ...env, RUNTIME_NAMESPACE: 'flux-system', SOURCE_CONTROLLER_LOCALHOST: `127.0.0.1:${p.storage}` },
    p.kMetrics,
  );
  return { source, kustomize };
}
