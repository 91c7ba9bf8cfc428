/**
 * The reconcile trace's shape with the official SDK's in-memory exporter (the OTLP export to a real Jaeger is
 * e2e/tracing.test.ts): one root, a child per step, a failed step's reason, and nothing but names in attributes.
 */
import { describe, expect, it } from 'vitest';
import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { otlpTracing } from './tracing.ts';

describe('a trace per reconcile', () => {
  it('has a root span and one child per step; a failed step carries its reason, the root ends failed', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = await otlpTracing('http://127.0.0.1:1/v1/traces', { version: '0.0.0-test', exporter });
    const t = tracing.reconcile('team-a', 'web');
    await t.step('fetch', async () => ({ ok: true }));
    t.set({ 'packagesync.revision': 'main@sha1:abc' });
    await t.step('render', async () => ({ ok: false, failure: { reason: 'RenderFailed', message: 'token=s3cret' } }));
    await expect(t.step('plan', async () => Promise.reject(new Error('password s3cret')))).rejects.toThrow();
    t.end({ failed: true });
    await tracing.flush();
    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name === 'reconcile')!;
    expect(spans.map((s) => s.name).sort()).toEqual(['fetch', 'plan', 'reconcile', 'render']);
    for (const s of spans.filter((x) => x !== root)) {
      expect(s.spanContext().traceId).toBe(root.spanContext().traceId);
      expect(s.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    }
    expect(root.attributes).toEqual({
      'packagesync.namespace': 'team-a',
      'packagesync.name': 'web',
      'packagesync.revision': 'main@sha1:abc',
    });
    expect(root.status.code).toBe(SpanStatusCode.ERROR);
    expect(root.resource.attributes['service.name']).toBe('packagesync');
    const render = spans.find((s) => s.name === 'render')!;
    expect(render.attributes['packagesync.reason']).toBe('RenderFailed');
    expect(render.status).toEqual({ code: SpanStatusCode.ERROR, message: 'RenderFailed' });
    // a failure's message and an exception's text (either may quote a secret) reach no span
    expect(JSON.stringify(spans.map((s) => [s.attributes, s.status, s.events]))).not.toContain('s3cret');
    await tracing.shutdown();
  });

  it('two reconciles are two traces, even when one runs inside the other’s step', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = await otlpTracing('http://127.0.0.1:1/v1/traces', { version: '0.0.0-test', exporter });
    const a = tracing.reconcile('team-a', 'a');
    await a.step('apply', async () => {
      const b = tracing.reconcile('team-a', 'b');
      await b.step('fetch', async () => undefined);
      b.end({ failed: false });
    });
    a.end({ failed: false });
    await tracing.flush();
    const roots = exporter.getFinishedSpans().filter((s) => s.name === 'reconcile');
    expect(roots).toHaveLength(2);
    expect(roots[0]!.spanContext().traceId).not.toBe(roots[1]!.spanContext().traceId);
    expect(roots.every((r) => r.parentSpanContext === undefined)).toBe(true);
    await tracing.shutdown();
  });
});
