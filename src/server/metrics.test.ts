import { describe, expect, it } from 'vitest';
import { conditionStatuses, createMetrics } from './metrics.ts';

const ps = (conditions: { type: string; status: 'True' | 'False' | 'Unknown' }[]) => ({
  metadata: { name: 'web', namespace: 'team-a' },
  status: { conditions: conditions.map((c) => ({ ...c, reason: 'R', message: '', lastTransitionTime: '' })) },
});

const lines = (text: string, prefix: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(prefix))
    .sort();

describe('controller metrics', () => {
  it("exposes the renderer's tool runs, tool seconds, render-cache hits and replaced workers as they are at scrape time", async () => {
    const m = createMetrics({ processMetrics: false });
    const stats = { toolRuns: 2, toolSeconds: 0.5, cacheHits: 7, workersReplaced: 1 };
    m.observeRenderer(() => stats);
    expect(lines((await m.render()).body, 'packagesync_render_')).toEqual([
      'packagesync_render_cache_hits_total 7',
      'packagesync_render_tool_runs_total 2',
      'packagesync_render_tool_seconds_total 0.5',
      'packagesync_render_workers_replaced_total 1',
    ]);
    stats.cacheHits = 8;
    expect(lines((await m.render()).body, 'packagesync_render_cache')).toEqual([
      'packagesync_render_cache_hits_total 8',
    ]);
  });

  it('reads absent abnormal-true conditions as False and an absent Ready as Unknown', () => {
    expect(conditionStatuses(undefined)).toEqual({ Ready: 'Unknown', Reconciling: 'False', Stalled: 'False' });
    expect(
      conditionStatuses([
        { type: 'Ready', status: 'False' },
        { type: 'Stalled', status: 'True' },
      ]),
    ).toEqual({
      Ready: 'False',
      Reconciling: 'False',
      Stalled: 'True',
    });
  });

  it('exposes one condition series per type and status, and drops them when the PackageSync is forgotten', async () => {
    const m = createMetrics({ processMetrics: false });
    m.setConditions(
      ps([
        { type: 'Ready', status: 'Unknown' },
        { type: 'Reconciling', status: 'True' },
      ]),
    );
    m.setConditions(ps([{ type: 'Ready', status: 'True' }]));
    const { body } = await m.render();
    const ready = lines(body, 'packagesync_condition{name="web",namespace="team-a",type="Ready"');
    expect(ready).toEqual([
      'packagesync_condition{name="web",namespace="team-a",type="Ready",status="False"} 0',
      'packagesync_condition{name="web",namespace="team-a",type="Ready",status="True"} 1',
      'packagesync_condition{name="web",namespace="team-a",type="Ready",status="Unknown"} 0',
    ]);
    expect(body).toContain('packagesync_condition{name="web",namespace="team-a",type="Reconciling",status="False"} 1');
    expect(lines(body, 'packagesync_condition{')).toHaveLength(9);
    m.forget('team-a', 'web');
    expect(lines((await m.render()).body, 'packagesync_condition{')).toHaveLength(0);
  });

  it('counts reconciles by result, API requests by verb, code and resource, queue depth, applies, prunes', async () => {
    const m = createMetrics({ processMetrics: false });
    m.observeReconcile({ namespace: 'a', name: 'b' }, 1.5, false);
    m.observeReconcile({ namespace: 'a', name: 'b' }, 0.2, true);
    m.observeReconcile({ namespace: 'a', name: 'b' }, 0.3, true);
    m.onApiRequest('PATCH', 200, 0.01, 'packagesyncs');
    m.onApiRequest('PATCH', 409, 0.02, 'configmaps');
    m.onApiRequest('PATCH', 409, 0.02, 'configmaps');
    m.onApiRequest('POST', 201, 0.01, 'selfsubjectaccessreviews');
    m.onApiRequest('GET', 0, 30, '');
    m.setQueue(4, 2);
    m.objects.applied(3);
    m.objects.pruned(1);
    m.objects.healthRound();
    m.objects.healthRound();
    const { body, contentType } = await m.render();
    expect(contentType).toMatch(/^text\/plain/);
    expect(body).toContain('packagesync_reconcile_total{result="success"} 1');
    expect(body).toContain('packagesync_reconcile_total{result="failure"} 2');
    expect(body).toContain('packagesync_reconcile_duration_seconds_count 3');
    expect(body).toContain('packagesync_api_requests_total{verb="PATCH",code="200",resource="packagesyncs"} 1');
    expect(body).toContain('packagesync_api_requests_total{verb="PATCH",code="409",resource="configmaps"} 2');
    expect(body).toContain(
      'packagesync_api_requests_total{verb="POST",code="201",resource="selfsubjectaccessreviews"} 1',
    );
    expect(body).toContain('packagesync_api_requests_total{verb="GET",code="0",resource=""} 1');
    expect(body).toContain('packagesync_api_request_duration_seconds_count{verb="PATCH"} 3');
    expect(body).toContain('packagesync_queue_depth 4');
    expect(body).toContain('packagesync_reconciles_in_flight 2');
    expect(body).toContain('packagesync_objects_applied_total 3');
    expect(body).toContain('packagesync_objects_pruned_total 1');
    expect(body).toContain('packagesync_health_rounds_total 2');
  });

  it('times git fetches through a wrapped source, failures included', async () => {
    const m = createMetrics({ processMetrics: false });
    const source = m.instrumentSource({
      fetch: async () => {
        throw new Error('network down');
      },
    });
    await expect(source.fetch({ url: 'https://x', path: '.' }, undefined, AbortSignal.timeout(1000))).rejects.toThrow(
      'network down',
    );
    expect((await m.render()).body).toContain('packagesync_git_fetch_duration_seconds_count 1');
  });

  it('a wrapped source keeps every resolver: an OCI PackageSyncSet resolves its artifact through it', async () => {
    const m = createMetrics({ processMetrics: false });
    const source = m.instrumentSource({
      fetch: () => Promise.reject(new Error('not called')),
      resolve: () => Promise.resolve({ ok: true, value: 'a'.repeat(40) }),
      resolveArtifact: () => Promise.resolve({ ok: true, value: `v1@sha256:${'b'.repeat(64)}` }),
    });
    const src = { oci: { url: 'oci://r.example/web' }, path: '.' };
    expect(await source.resolveArtifact?.(src, undefined, AbortSignal.timeout(1000))).toEqual({
      ok: true,
      value: `v1@sha256:${'b'.repeat(64)}`,
    });
    expect(await source.resolve?.({ url: 'https://x', path: '.' }, undefined, AbortSignal.timeout(1000))).toEqual({
      ok: true,
      value: 'a'.repeat(40),
    });
  });

  it('includes Node process metrics by default', async () => {
    const { body } = await createMetrics().render();
    expect(body).toContain('process_cpu_user_seconds_total');
    expect(body).toContain('nodejs_eventloop_lag_seconds');
  });
});
