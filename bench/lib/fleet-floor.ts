/**
 * The API server's floor for a fleet: the least any controller must do to bring N units up. The harness itself
 * server-side applies every unit's four objects (exactly fixtures.ts `fleetUnit`, one SSA PATCH each, through
 * floor.ts) at a stated number in flight, then waits until every Deployment is Current by the controller's own
 * health rules (src/core/health `computeHealth`, kstatus: observedGeneration caught up, the rollout's
 * conditions) on the live objects, followed through one LIST + WATCH, never by polling. No git, no render, no
 * inventory, no status writes: PackageSync's time over this is its own overhead; the floor's control-plane CPU
 * says how much of the machine kube-apiserver, kube-controller-manager, etcd and kwok need for the fleet alone.
 * Its own namespace, deleted afterwards and always waited for (unmeasured), so the next run starts quiet.
 */
import { cpus } from 'node:os';
import { computeHealth } from '../../src/core/health/index.ts';
import type { KubeObject } from '../../src/core/object.ts';
import { apiserverRequests, createNamespace, deleteNamespace, diff, type VerbCounts } from './cluster.ts';
import { cpuWindow, type ControlPlaneCpu } from './control-plane.ts';
import type { BenchContext } from './fleet.ts';
import { fleetUnit, unitName } from './fixtures.ts';
import { applyFloor } from './floor.ts';
import { watchUntil } from './units.ts';

export interface FleetFloorResult {
  n: number;
  /** SSA PATCHes in flight. */
  inFlight: number;
  /** First PATCH → the last PATCH answered (4 × N of them). */
  appliedSeconds: number;
  /** First PATCH → every object applied and every Deployment Current (what a unit's Ready stands for). */
  currentSeconds: number;
  /** The floor's PATCHes answered 2xx, counted by its own client (the API server's delta counts every client). */
  applied: number;
  /** The floor's PATCHes answered 429/5xx and sent again. */
  retries: number;
  /** apiserver_request_total delta by verb over the window, minus the harness's own watch (the PATCHes stay). */
  apiserver: VerbCounts;
  controlPlane?: ControlPlaneCpu;
  /** The harness's own CPU over the window (it is the floor's client: serialising, TLS, the watch). */
  harnessCpuSeconds?: number;
}

export const isCurrent = (o: KubeObject): boolean => computeHealth(o).status === 'Current';

export async function runFleetFloor(ctx: BenchContext, n: number, inFlight: number): Promise<FleetFloorResult> {
  const { client } = ctx.harness;
  const ns = `${ctx.prefix}fleet-floor-${n}`;
  await createNamespace(client, ns);
  try {
    const docs = Array.from({ length: n }, (_, i) => fleetUnit(unitName(i), i)).flat();
    const before = await apiserverRequests(client);
    const own = { ...ctx.harness.own };
    const watch = watchUntil(client, `/apis/apps/v1/namespaces/${ns}/deployments`, n, isCurrent, 30 * 60_000);
    const progress = setInterval(() => ctx.log(`  floor: ${watch.readyNow()}/${n} Deployments Current`), 30_000);
    try {
      let started = 0;
      let cpu: (() => ControlPlaneCpu) | undefined;
      let ownCpu = process.cpuUsage();
      const applied = await applyFloor(ctx.kubeconfig, ns, docs, inFlight, () => {
        cpu = cpuWindow(ctx.controlPlane, cpus().length);
        ownCpu = process.cpuUsage();
        started = performance.now();
      });
      const appliedSeconds = (performance.now() - started) / 1000;
      const currentAt = await watch.ready;
      const controlPlane = cpu?.();
      const used = process.cpuUsage(ownCpu);
      const harness = diff(ctx.harness.own, own);
      harness.GET = (harness.GET ?? 0) + 1; // the first /metrics read, completed inside the window
      // (or not: the API server may count it before its body is read; then the subtraction leaves a 0, dropped)
      const apiserver = diff(await apiserverRequests(client), before, harness);
      for (const [k, v] of Object.entries(apiserver)) if (v === 0) delete apiserver[k];
      return {
        n,
        inFlight,
        appliedSeconds,
        // a unit's last ConfigMap can be answered after every Deployment is already Current
        currentSeconds: Math.max(appliedSeconds, (currentAt - started) / 1000),
        applied: applied.answered,
        retries: applied.retries,
        apiserver,
        harnessCpuSeconds: (used.user + used.system) / 1e6,
        ...(controlPlane ? { controlPlane } : {}),
      };
    } finally {
      clearInterval(progress);
      watch.stop();
    }
  } finally {
    await deleteNamespace(client, ns, 1_800_000, true);
  }
}
