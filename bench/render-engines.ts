/**
 * Per-render CPU and wall of the three ways to render a package (issue 27): the render worker pool
 * (--render-engine=worker), the subprocess path (--render-engine=subprocess: checks, scratch view, sandbox
 * launcher, the pinned binary) and the bare binary (`kustomize build` / `helm template` run directly, no
 * checks, no sandbox: the floor). For kustomize (test/render's overlay) and Helm (test/render's chart), serial
 * and 20 at once; the render cache is off, so every render renders.
 *
 *   node bench/render-engines.ts [--renders 60] [--parallel 20] [--quiet-wait 300]
 *
 * CPU is the whole machine's busy time over the run (/proc/stat: workers, launchers, binaries and this
 * process alike) per render, so it means something only on a quiet machine: the 1-minute load average is
 * waited for (bench/lib/machine-load.ts) and printed beside the table.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createRenderer, type BuildRequest, type Renderer } from '../src/adapters/render/build.ts';
import { defaultToolPaths } from '../src/config/tool-paths.ts';
import { bareHelm, bareKustomize, runBare, type BareCommand } from '../test/support/bare-render.ts';
import { loadCell, waitQuiet } from './lib/machine-load.ts';

const { values: args } = parseArgs({
  options: {
    renders: { type: 'string', default: '60' },
    parallel: { type: 'string', default: '20' },
    'quiet-wait': { type: 'string', default: '300' },
  },
});
const renders = Number(args.renders);
const parallel = Number(args.parallel);
const testdata = resolve(import.meta.dirname, '../test/render/testdata');
const tools = defaultToolPaths();
const limits = { timeoutMs: 120_000, maxOutputBytes: 64 << 20, maxFiles: 10_000 };
// the values a Secret would give the controller (valuesFrom), as a file for the bare binary
const secretValues = 'database:\n  password: bench\n';
const secretValuesFile = join(mkdtempSync(join(tmpdir(), 'render-engines-')), 'secret-values.yaml');
writeFileSync(secretValuesFile, secretValues);

interface Shape {
  tool: 'kustomize' | 'helm';
  request: BuildRequest;
  /** The bare binary's command: what the package costs with nothing around it. */
  bare: BareCommand;
}

const kustomizeRoot = join(testdata, 'kustomize-repo');
const helmRoot = join(testdata, 'helm-repo');
const shapes: Shape[] = [
  {
    tool: 'kustomize',
    request: {
      checkoutRoot: kustomizeRoot,
      packagePath: 'overlays/prod',
      files: [],
      spec: {},
      releaseName: 'web',
      releaseNamespace: 'prod',
    },
    bare: bareKustomize(join(kustomizeRoot, 'overlays/prod')),
  },
  {
    tool: 'helm',
    request: {
      checkoutRoot: helmRoot,
      packagePath: 'charts/web',
      files: [],
      spec: { helm: { valuesFiles: ['env/prod-values.yaml'], includeCRDs: true } },
      releaseName: 'web',
      releaseNamespace: 'prod',
      capabilities: { kubeVersion: 'v1.36.3', apiVersions: ['networking.k8s.io/v1'] },
      valuesFrom: [secretValues],
    },
    bare: bareHelm({
      chartDir: join(helmRoot, 'charts/web'),
      capabilities: { kubeVersion: 'v1.36.3', apiVersions: ['networking.k8s.io/v1'] },
      valuesFiles: [join(helmRoot, 'env/prod-values.yaml'), secretValuesFile],
    }),
  },
];

/** Busy and total jiffies of the whole machine. */
function machineTicks(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  const total = cpu.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}
const TICK_MS = 10; // USER_HZ is 100 on Linux

async function measure(n: number, inFlight: number, one: () => Promise<void>) {
  const before = machineTicks();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, n) }, async () => {
      while (next++ < n) await one();
    }),
  );
  const wallMs = performance.now() - started;
  const after = machineTicks();
  return { wallMsPerRender: wallMs / n, cpuMsPerRender: ((after.busy - before.busy) * TICK_MS) / n, wallMs };
}

async function bare(shape: Shape): Promise<void> {
  const run = await runBare(shape.bare);
  if (!run.ok) throw new Error(run.stderr);
}

async function viaRenderer(renderer: Renderer, shape: Shape): Promise<void> {
  const built = await renderer.build(shape.request);
  if (!built.ok) throw new Error(built.failure.message);
}

const quiet = await waitQuiet({ maxWaitSeconds: Number(args['quiet-wait']) });
const rows: string[] = [];
const workers = createRenderer({
  kustomizePath: tools.kustomize,
  helmPath: tools.helm,
  limits,
  cacheEntries: 0,
  engine: 'worker',
  worker: { bin: tools.worker, size: availableParallelism(), readRoots: [testdata] },
});
const subprocess = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits, cacheEntries: 0 });
for (const shape of shapes) {
  // warm: the workers started and their libraries loaded, the binaries in the page cache
  for (let i = 0; i < 3; i++) {
    await viaRenderer(workers, shape);
    await viaRenderer(subprocess, shape);
    await bare(shape);
  }
  for (const [engine, one] of [
    ['worker', () => viaRenderer(workers, shape)],
    ['subprocess', () => viaRenderer(subprocess, shape)],
    ['bare binary', () => bare(shape)],
  ] as const) {
    for (const inFlight of [1, parallel]) {
      const m = await measure(renders, inFlight, one);
      rows.push(
        `| ${shape.tool} | ${engine} | ${inFlight === 1 ? 'serial' : `${inFlight} at once`} | ${m.cpuMsPerRender.toFixed(1)} | ${m.wallMsPerRender.toFixed(1)} |`,
      );
      console.error(rows.at(-1));
    }
  }
}
workers.close();
console.log(
  `Render engines, ${renders} renders per row, ${availableParallelism()} cores, ${availableParallelism()} workers.`,
);
console.log(`Load average (1 min) before: ${loadCell(quiet)}; after: ${loadavg()[0]?.toFixed(2)}.\n`);
console.log('| package | engine | renders | CPU ms per render (whole machine) | wall ms per render |');
console.log('|---|---|---|---|---|');
for (const r of rows) console.log(r);
