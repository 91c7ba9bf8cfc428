/**
 * `make bench` / `node bench/run.ts [--quick]`: runs every benchmark of issue 7 on the bench's own control
 * plane (started here when down; see lib/cluster.ts) and regenerates bench/RESULTS.md.
 *
 *   --quick                 small sizes, a few minutes: checks the harness, not the issue's shapes
 *   --kubeconfig <path>     use this cluster instead of the bench control plane (the smoke test does)
 *   --no-flux               PackageSync only (no Go build)
 *   --only fleet,kfleet,big,latency   (kfleet: the kustomize fleet, issue 13; hfleet, asked for by name: the
 *                           Helm fleet of issue 27, Flux's side by helm-controller: bench/build-flux.sh helm)
 *   --fleet 100,500,1000    --kfleet 100,1000    --hfleet 1000    --big 1000,10000    --samples 10
 *   --profile               run the PackageSync controllers with --cpu-prof (bench/.work/profiles/)
 *   --node-flags "<flags>"  extra node flags for the PackageSync controllers (experiments)
 *   --heap-snapshot         a V8 heap snapshot of each PackageSync fleet controller once all are Ready, taken after
 *                           its figures (bench/.work/heap/; read with bench/heap-summary.ts)
 *   --out <file>            where to write the report (default bench/RESULTS.md)
 *   --prefix <p>  --port-base <n>   namespace prefix and first of four loopback ports
 *   --no-wait-cleanup       delete namespaces without waiting for them to go (smoke runs)
 *   --merge                 keep the rows this run does not measure from the previous run's results
 *   --flux-cap <seconds>    stop waiting for Flux's fleet then (its time is reported as a lower bound)
 *   --tools packagesync,flux  which tools the fleet runs (with --merge, a Flux-only rerun keeps the rest)
 *   --keep-cluster          leave the bench control plane up when this run started it (for repeated runs)
 *   --idle <seconds>        how long the largest PackageSync fleet idles before its CPU and requests are read (60)
 *   --skip-restart          do not SIGKILL and restart the controller after the largest fleet
 *   --flux-fleet 1000       the fleet sizes Flux runs at (default: every one)
 *   --quiet-wait 300        with Flux: wait up to this long before each fleet run for the 1-minute load average
 *                           to fall to 1.5 (every row records the load it started at; above it is marked)
 *   --require-quiet         with Flux: stop instead of measuring on a busy machine
 *   --render-only           rewrite the report from the last results (bench/.work/results-latest.json)
 *   --fleet-floor           the API server's floor (lib/fleet-floor.ts) at every PackageSync fleet size; by default
 *                           only at the largest, when it is 1,000 or more and PackageSync runs (make bench: once, at
 *                           1,000; --quick and a Flux-only --tools rerun: none)
 *   --no-fleet-floor        never   --floor-in-flight 32   the floor's SSA PATCHes in flight
 *   --finalizer-policy install|remove|leave   deploy/optional/finalizer-policy.yaml (ADR 0051): installed (the default on the
 *                           bench control plane, as deploy/ installs it), removed (the controller adds each
 *                           finalizer itself, one write more per unit), or left as the cluster has it (the default
 *                           with --kubeconfig: a cluster-wide policy is not the bench's to change there)
 *   --cluster-dir <dir>     hack/cluster.sh's dir of the cluster under test, for its processes' CPU (pids/);
 *                           default: the kubeconfig's dir (what hack/cluster.sh writes); none found: "not measured"
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runBig, type BigResult } from './lib/big.ts';
import {
  applyCrds,
  countingClient,
  ensureBenchCluster,
  kubectl,
  root,
  setWaitForDeletion,
  workDir,
} from './lib/cluster.ts';
import {
  commitBig,
  commitChange,
  commitFleet,
  commitHelmFleet,
  commitKustomizeFleet,
  startGitFixtures,
} from './lib/fixtures.ts';
import {
  removeLeftovers,
  runFleetFlux,
  runFleetPackageSync,
  type BenchContext,
  type FleetResult,
} from './lib/fleet.ts';
import { runLatency, type LatencyResult } from './lib/latency.ts';
import { findControlPlane, waitControlPlaneSettled } from './lib/control-plane.ts';
import { runFleetFloor, type FleetFloorResult } from './lib/fleet-floor.ts';
import { renderResults, type Results } from './lib/report.ts';
import { machine, versions } from './lib/machine.ts';
import { merge } from './lib/merge.ts';
import { runHelmFleetFlux, runHelmFleetPackageSync, type HelmFluxBinaries } from './lib/helm-fleet.ts';
import { useFinalizerPolicy, type PolicyChoice } from './lib/finalizer-policy.ts';
import { QUIET_LOAD, refusal, waitQuiet, type LoadBeforeRun } from './lib/machine-load.ts';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    kubeconfig: { type: 'string' },
    'no-flux': { type: 'boolean', default: false },
    only: { type: 'string', default: 'fleet,kfleet,big,latency' },
    fleet: { type: 'string' },
    kfleet: { type: 'string' },
    hfleet: { type: 'string' },
    big: { type: 'string' },
    samples: { type: 'string' },
    profile: { type: 'boolean', default: false },
    'node-flags': { type: 'string' },
    'heap-snapshot': { type: 'boolean', default: false },
    out: { type: 'string', default: resolve(root, 'bench/RESULTS.md') },
    prefix: { type: 'string', default: 'bench-' },
    'port-base': { type: 'string', default: '18090' },
    concurrency: { type: 'string', default: '10' },
    'no-wait-cleanup': { type: 'boolean', default: false },
    merge: { type: 'boolean', default: false },
    'flux-cap': { type: 'string', default: '0' },
    'render-only': { type: 'boolean', default: false },
    tools: { type: 'string', default: 'packagesync,flux' },
    'keep-cluster': { type: 'boolean', default: false },
    idle: { type: 'string' },
    'flux-fleet': { type: 'string' },
    'skip-restart': { type: 'boolean', default: false },
    // issue 27: a Flux comparison waits this long for the 1-minute load average to fall to 1.5; still above,
    // its rows are marked, or with --require-quiet the run stops
    'quiet-wait': { type: 'string', default: '300' },
    'require-quiet': { type: 'boolean', default: false },
    // the fleet's spec.interval (issue 18 measures 10m), and how long the largest fleet rests after Ready before its
    // at-rest window: one interval (plus jitter) puts every unit's first periodic check behind it (ADR 0031)
    'fleet-interval': { type: 'string', default: '10m' },
    'idle-warmup': { type: 'string', default: '0' },
    'fleet-floor': { type: 'boolean', default: false },
    'no-fleet-floor': { type: 'boolean', default: false },
    'floor-in-flight': { type: 'string', default: '32' },
    'cluster-dir': { type: 'string' },
    'finalizer-policy': { type: 'string' },
  },
});

const sizes = (s: string | undefined, dflt: number[]) => (s ? s.split(',').map(Number) : dflt);
const quick = args.quick;
const fleetSizes = sizes(args.fleet, quick ? [20, 100] : [100, 500, 1000]);
const kfleetSizes = sizes(args.kfleet, quick ? [20] : [100, 1000]);
const hfleetSizes = sizes(args.hfleet, quick ? [20] : [1000]);
const bigSizes = sizes(args.big, quick ? [200, 1000] : [1000, 10_000]);
const samples = Number(args.samples ?? (quick ? 3 : 10));
const only = new Set(args.only.split(','));
const tools = new Set(args.tools.split(','));
const fluxCap = Number(args['flux-cap']);
// issue 18: Flux stays the anchor at 1,000 while PackageSync goes to 10,000 in the same run
const fluxFleet = args['flux-fleet'] ? sizes(args['flux-fleet'], []) : undefined;
// the floor costs one more fleet (and its deletion): by default once, at the largest fleet if it is 1,000 or more
const floorAt = (n: number) =>
  !args['no-fleet-floor'] &&
  (args['fleet-floor'] || (tools.has('packagesync') && n === Math.max(...fleetSizes) && n >= 1000));
const started = Date.now();
const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function main(): Promise<void> {
  if (args['render-only']) {
    // e.g. after editing bench/HISTORY.md: no cluster, no measurement
    const results = JSON.parse(readFileSync(resolve(workDir, 'results-latest.json'), 'utf8')) as Results;
    const history = resolve(root, 'bench/HISTORY.md');
    if (existsSync(history)) results.history = readFileSync(history, 'utf8');
    writeFileSync(args.out, renderResults(results));
    return log(`wrote ${args.out}`);
  }
  mkdirSync(workDir, { recursive: true });
  setWaitForDeletion(!args['no-wait-cleanup']);
  // the bench's own control plane goes down again at the end when this run started it (--keep-cluster: not)
  const cluster = args.kubeconfig ? undefined : ensureBenchCluster();
  const kubeconfig = args.kubeconfig ?? cluster!.kubeconfig;
  log(`cluster: ${kubeconfig}`);
  applyCrds(kubeconfig);
  let flux: BenchContext['flux'];
  let fluxHelm: HelmFluxBinaries | undefined;
  const fluxTools = !args['no-flux'] && tools.has('flux');
  const useFlux = fluxTools && (only.has('fleet') || only.has('kfleet'));
  const useFluxHelm = fluxTools && only.has('hfleet');
  if (useFlux || useFluxHelm) {
    log('building Flux (cached after the first time)');
    const target = useFlux && useFluxHelm ? 'every' : useFlux ? 'all' : 'helm';
    const paths = execFileSync(resolve(root, 'bench/build-flux.sh'), [target], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const dir = (k: string) => new RegExp(`${k}=(.*)`).exec(paths)![1]!;
    if (useFlux) flux = { sourceDir: dir('SOURCE_CONTROLLER_DIR'), kustomizeDir: dir('KUSTOMIZE_CONTROLLER_DIR') };
    if (useFluxHelm) fluxHelm = { sourceDir: dir('SOURCE_CONTROLLER_DIR'), helmDir: dir('HELM_CONTROLLER_DIR') };
    const crdDirs = new Set([
      ...(flux ? [flux.sourceDir, flux.kustomizeDir] : []),
      ...(fluxHelm ? [fluxHelm.sourceDir, fluxHelm.helmDir] : []),
    ]);
    for (const d of crdDirs)
      kubectl(kubeconfig, 'apply', '--server-side', '--force-conflicts', '-f', resolve(d, 'crds'));
  }
  const fluxCrds = [
    ...(flux || fluxHelm ? ['gitrepositories.source.toolkit.fluxcd.io'] : []),
    ...(fluxHelm ? ['helmcharts.source.toolkit.fluxcd.io', 'helmreleases.helm.toolkit.fluxcd.io'] : []),
  ];
  for (const crd of ['packagesyncs.packagesync.io', ...fluxCrds])
    kubectl(kubeconfig, 'wait', '--for=condition=Established', `crd/${crd}`, '--timeout=60s');

  const git = await startGitFixtures();
  await commitFleet(git.fleet.repo, Math.max(...fleetSizes));
  // the kustomize fleet lives in the same repository (kfleet/): one clone and one artifact serve both fleets
  if (only.has('kfleet')) await commitKustomizeFleet(git.fleet.repo, Math.max(...kfleetSizes));
  if (only.has('hfleet')) await commitHelmFleet(git.fleet.repo);
  for (const n of bigSizes) await commitBig(git.big.repo, n);
  await commitChange(git.change.repo, 0);
  const harness = await countingClient(kubeconfig);
  await removeLeftovers(harness.client, args.prefix);
  const finalizerPolicy = await useFinalizerPolicy(
    kubeconfig,
    harness.client,
    (args['finalizer-policy'] ?? (args.kubeconfig ? 'leave' : 'install')) as PolicyChoice,
    'default',
  );
  const controlPlane = findControlPlane(args['cluster-dir'] ?? dirname(kubeconfig));
  if (controlPlane.missing.length) log(`control-plane CPU not measured for ${controlPlane.missing.join('; ')}`);
  const heapDir = resolve(workDir, 'heap');
  if (args['heap-snapshot']) mkdirSync(heapDir, { recursive: true });
  const ctx: BenchContext = {
    kubeconfig,
    harness,
    git,
    concurrency: Number(args.concurrency),
    flux,
    prefix: args.prefix,
    portBase: Number(args['port-base']),
    fleetInterval: args['fleet-interval'],
    idleWarmupSeconds: Number(args['idle-warmup']),
    controlPlane,
    nodeArgs: [
      ...(args['node-flags'] ? args['node-flags'].split(/\s+/).filter(Boolean) : []),
      ...(args.profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve(workDir, 'profiles')}`] : []),
      ...(args['heap-snapshot'] ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapDir}`] : []),
    ],
    ...(args['heap-snapshot'] ? { heapSnapshotDir: heapDir } : {}),
    log,
  };

  const fleet: FleetResult[] = [];
  const kfleet: FleetResult[] = [];
  const kfleetPlain: FleetResult[] = [];
  const hfleet: FleetResult[] = [];
  const big: BigResult[] = [];
  const fleetFloor: FleetFloorResult[] = [];
  let latency: LatencyResult | undefined;
  const settings = {
    'controller concurrency (both tools)': String(ctx.concurrency),
    'PackageSync apply concurrency': '32 (default)',
    'PackageSync finalizer': finalizerPolicy
      ? 'given at creation by deploy/optional/finalizer-policy.yaml (ADR 0051)'
      : 'added by the controller (no finalizer policy)',
    'Flux flags': flux
      ? `--concurrent=${ctx.concurrency} --requeue-dependency=5s --kube-api-qps=500 --kube-api-burst=1000 (Flux’s vertical-scaling guide); one GitRepository for the whole fleet`
      : 'not run',
    'Flux helm-controller (Helm fleet)': fluxHelm
      ? `--concurrent=${ctx.concurrency}, the same flags; one GitRepository and one HelmChart for the whole fleet`
      : 'not run',
    'Flux time cap': fluxCap ? `${fluxCap} s: a capped Flux time is a lower bound` : 'none',
    'quiet machine':
      flux || fluxHelm
        ? `before each fleet run: up to ${args['quiet-wait']} s for the 1-minute load average to fall to ${QUIET_LOAD}; ` +
          (args['require-quiet'] ? 'still above: the run stops' : 'still above: the row is marked')
        : 'load recorded beside each row',
    cluster: args.kubeconfig ? args.kubeconfig : 'bench control plane (bench/.work/cluster, own ports)',
  };
  const latestPath = resolve(workDir, 'results-latest.json');
  const previous =
    args.merge && existsSync(latestPath) ? (JSON.parse(readFileSync(latestPath, 'utf8')) as Results) : undefined;
  // What ran, read once before the first report: the report written after a phase makes the tree dirty, so a
  // later reading said "+ uncommitted changes" of every run with more than one phase.
  const ran = versions(kubeconfig, !!flux, !!fluxHelm);
  // Written after every phase, so a long run that is stopped keeps what it measured.
  const publish = () => {
    const results: Results = {
      date: new Date().toISOString(),
      quick,
      machine: machine(),
      versions: ran,
      settings,
      fleet: [...fleet],
      kfleet: [...kfleet],
      kfleetPlain: [...kfleetPlain],
      hfleet: [...hfleet],
      big: [...big],
      fleetFloor: [...fleetFloor],
      latency,
      history: existsSync(resolve(root, 'bench/HISTORY.md'))
        ? readFileSync(resolve(root, 'bench/HISTORY.md'), 'utf8')
        : undefined,
    };
    if (previous) merge(results, previous);
    writeFileSync(resolve(workDir, `results-${started}.json`), JSON.stringify(results, null, 2));
    if (!args.kubeconfig) writeFileSync(latestPath, JSON.stringify(results, null, 2));
    writeFileSync(args.out, renderResults(results));
  };
  // every fleet row says the load it started at; a comparison with Flux first waits for a quiet machine
  const comparing = flux !== undefined || fluxHelm !== undefined;
  const beforeRun = async (what: string): Promise<LoadBeforeRun> => {
    const load = await waitQuiet({ maxWaitSeconds: comparing ? Number(args['quiet-wait']) : 0 });
    const refused = refusal(what, load, comparing && args['require-quiet']);
    if (refused) throw new Error(refused);
    if (comparing && !load.quiet)
      log(`  ${what}: load average ${load.loadAverage1m.toFixed(2)} > ${QUIET_LOAD} after waiting: the row is marked`);
    return load;
  };
  const quarters = (r: FleetResult) =>
    r.readyQuarters ? `; 25/50/75/100 % Ready at ${r.readyQuarters.map((s) => s.toFixed(1)).join(' / ')} s` : '';
  // every measured run starts on a control plane at rest: the last run's cleanup is not this one's cost
  // (only on the bench's own control plane: on a shared one, others' work is not ours to wait for)
  const settle = async () => {
    if (args.kubeconfig) return;
    const s = await waitControlPlaneSettled(controlPlane);
    if (s.seconds >= 1)
      log(`  control plane ${s.settled ? 'at rest' : 'still busy'} after ${s.seconds.toFixed(0)} s of waiting`);
  };
  try {
    if (only.has('fleet')) {
      const largest = Math.max(...fleetSizes);
      const idle = Number(args.idle ?? (quick ? 5 : 60));
      for (const n of fleetSizes) {
        if (floorAt(n)) {
          await settle();
          // before PackageSync's run, and its namespace gone before that run starts (unmeasured)
          log(`fleet ${n}: the API server's floor, ${args['floor-in-flight']} in flight`);
          fleetFloor.push(await runFleetFloor(ctx, n, Number(args['floor-in-flight'])));
          const f = fleetFloor.at(-1)!;
          log(`  applied ${f.appliedSeconds.toFixed(1)} s, all Current ${f.currentSeconds.toFixed(1)} s`);
          publish();
        }
        if (tools.has('packagesync')) {
          await settle();
          log(`fleet ${n}: PackageSync`);
          // the largest fleet also idles (CPU, requests) and survives a SIGKILL (issue 18.2)
          const last = n === largest;
          const load = await beforeRun(`fleet ${n}: PackageSync`);
          fleet.push({
            ...(await runFleetPackageSync(ctx, n, last ? idle : 0, 'plain', last && !args['skip-restart'])),
            load,
          });
          log(
            `  ${fleet.at(-1)!.seconds.toFixed(1)} s, peak ${fleet.at(-1)!.peakMiB.toFixed(0)} MiB${quarters(fleet.at(-1)!)}`,
          );
          publish();
        }
        if (flux && (!fluxFleet || fluxFleet.includes(n))) {
          await settle();
          log(`fleet ${n}: Flux`);
          const load = await beforeRun(`fleet ${n}: Flux`);
          fleet.push({ ...(await runFleetFlux(ctx, n, n === largest ? idle : 0, fluxCap)), load });
          log(
            `  ${fleet.at(-1)!.seconds.toFixed(1)} s, peak ${fleet.at(-1)!.peakMiB.toFixed(0)} MiB${quarters(fleet.at(-1)!)}`,
          );
          publish();
        }
      }
    }
    if (only.has('kfleet')) {
      for (const n of kfleetSizes) {
        if (tools.has('packagesync')) {
          // its baseline first: the same objects as plain YAML (issue 27: "the plain fleet of the same objects")
          await settle();
          log(`kustomize fleet ${n}, its objects as plain YAML: PackageSync`);
          const plainLoad = await beforeRun(`kustomize fleet ${n}, its objects as plain YAML: PackageSync`);
          kfleetPlain.push({ ...(await runFleetPackageSync(ctx, n, 0, 'kustomize-objects')), load: plainLoad });
          log(`  ${kfleetPlain.at(-1)!.seconds.toFixed(1)} s${quarters(kfleetPlain.at(-1)!)}`);
          publish();
          await settle();
          log(`kustomize fleet ${n}: PackageSync`);
          const load = await beforeRun(`kustomize fleet ${n}: PackageSync`);
          kfleet.push({ ...(await runFleetPackageSync(ctx, n, 0, 'kustomize')), load });
          const k = kfleet.at(-1)!;
          log(`  ${k.seconds.toFixed(1)} s; requested resync ${k.render?.resyncSeconds.toFixed(1)} s${quarters(k)}`);
          publish();
        }
        if (flux) {
          await settle();
          log(`kustomize fleet ${n}: Flux`);
          const load = await beforeRun(`kustomize fleet ${n}: Flux`);
          kfleet.push({ ...(await runFleetFlux(ctx, n, 0, fluxCap, 'kustomize')), load });
          const k = kfleet.at(-1)!;
          log(
            `  ${k.seconds.toFixed(1)} s; requested resync ${k.render ? k.render.resyncSeconds.toFixed(1) : '—'} s${quarters(k)}`,
          );
          publish();
        }
      }
    }
    if (only.has('hfleet')) {
      for (const n of hfleetSizes) {
        if (tools.has('packagesync')) {
          await settle();
          log(`Helm fleet ${n}: PackageSync`);
          const load = await beforeRun(`Helm fleet ${n}: PackageSync`);
          hfleet.push({ ...(await runHelmFleetPackageSync(ctx, n)), load });
          log(
            `  ${hfleet.at(-1)!.seconds.toFixed(1)} s, peak ${hfleet.at(-1)!.peakMiB.toFixed(0)} MiB${quarters(hfleet.at(-1)!)}`,
          );
          publish();
        }
        if (fluxHelm) {
          await settle();
          log(`Helm fleet ${n}: Flux`);
          const load = await beforeRun(`Helm fleet ${n}: Flux`);
          hfleet.push({ ...(await runHelmFleetFlux(ctx, fluxHelm, n, fluxCap)), load });
          log(
            `  ${hfleet.at(-1)!.seconds.toFixed(1)} s, peak ${hfleet.at(-1)!.peakMiB.toFixed(0)} MiB${quarters(hfleet.at(-1)!)}`,
          );
          publish();
        }
      }
    }
    if (only.has('big')) {
      for (const n of bigSizes) {
        log(`big package ${n}`);
        big.push(await runBig(ctx, n, n === Math.max(...bigSizes)));
        const b = big.at(-1)!;
        log(`  floor ${b.floorSeconds.toFixed(1)} s, PackageSync ${b.seconds.toFixed(1)} s`);
        if (b.noop)
          log(
            `  no-op (at rest ${b.atRestSeconds?.toFixed(1)} s after Ready): ${b.noop.seconds.toFixed(2)} s, ${b.noop.requests} requests, ${b.noop.writes} writes, ${b.noop.renders} renders; the next check: ${b.noop.next?.writes} writes, ${b.noop.next?.renders} renders, ${b.noop.next?.requests} requests; requested: ${b.noop.requested?.seconds.toFixed(2)} s, CPU ${b.noop.requested?.cpuSeconds?.toFixed(2)} s, ${b.noop.requested?.writes} writes`,
          );
        if (b.inventory) log(`  inventory: ${JSON.stringify(b.inventory)}`);
        if (b.prune)
          log(
            `  prune ${b.prune.pruned}: ${b.prune.seconds.toFixed(1)} s, left behind ${b.prune.leftBehind}, wrongly deleted ${b.prune.wronglyDeleted}, inventory = live: ${b.prune.inventoryMatchesLive}`,
          );
        publish();
      }
    }
    if (only.has('latency')) {
      log(`change latency: ${samples} samples each`);
      latency = await runLatency(ctx, samples);
    }
    publish();
  } finally {
    await git.stop();
    await harness.client.close();
    if (!args['keep-cluster']) cluster?.stop();
  }
  log(`wrote ${args.out}`);
}

main().catch((e: unknown) => {
  console.error(e);
  // a failure before the measuring starts leaves the git servers open (and the bench plane up): exit, not hang
  process.exit(1);
});
