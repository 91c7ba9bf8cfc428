/**
 * The kustomize fleet's requested resync (issue 13), for either tool: moved out of fleet.ts, which runs the fleets.
 */
import PQueue from 'p-queue';
import type { KubeObject } from '../../src/core/object.ts';
import { apiserverRequests, diff, metricValue, writes } from './cluster.ts';
import type { BenchContext, RenderFigures } from './fleet.ts';
import { watchUntil } from './units.ts';

/**
 * A requested resync of the whole fleet with nothing changed: every unit gets its tool's reconcile-request
 * annotation (one PATCH each, by the harness), then the time until every unit's status.lastHandledReconcileAt
 * says it handled it. PackageSync re-applies every object on a request (its periodic resync of a settled
 * package does not); Flux builds and dry-run-applies as on every reconcile. Both render what did not change:
 * PackageSync's render cache turns that into no kustomize run, which the counters show.
 */
export async function resync(
  ctx: BenchContext,
  collection: string,
  n: number,
  annotation: string,
  metrics: () => Promise<string>,
  duration: { sum: string; count: string; labels?: string },
): Promise<Omit<RenderFigures, 'coldToolRuns' | 'coldToolSeconds' | 'resyncToolRuns' | 'resyncCacheHits'>> {
  const { client } = ctx.harness;
  const token = `bench-resync-${Date.now()}`;
  const handled = (o: KubeObject) =>
    (o.status as { lastHandledReconcileAt?: string } | undefined)?.lastHandledReconcileAt === token;
  const before = await metrics();
  const apiBefore = await apiserverRequests(client);
  const own = { ...ctx.harness.own };
  const watch = watchUntil(client, collection, n, handled, 10 * 60_000);
  const started = performance.now();
  try {
    const list = await client.request<{ items: { metadata: { name: string } }[] }>('GET', collection);
    const q = new PQueue({ concurrency: 32 });
    await Promise.all(
      list.items.map((i) =>
        q.add(() =>
          client.request('PATCH', `${collection}/${i.metadata.name}`, {
            contentType: 'application/merge-patch+json',
            body: { metadata: { annotations: { [annotation]: token } } },
          }),
        ),
      ),
    );
    const done = await watch.ready;
    const after = await metrics();
    const harness = diff(ctx.harness.own, own);
    const api = diff(await apiserverRequests(client), apiBefore, harness);
    const reconciles =
      metricValue(after, duration.count, duration.labels) - metricValue(before, duration.count, duration.labels);
    const spent =
      metricValue(after, duration.sum, duration.labels) - metricValue(before, duration.sum, duration.labels);
    return {
      resyncSeconds: (done - started) / 1000,
      resyncReconciles: Math.round(reconciles),
      resyncSecondsPerReconcile: reconciles > 0 ? spent / reconciles : 0,
      resyncWrites: writes(api),
    };
  } finally {
    watch.stop();
  }
}
