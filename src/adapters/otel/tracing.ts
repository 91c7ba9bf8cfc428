/**
 * OpenTelemetry traces of reconciles (docs/adr/0043), with the official SDK: a root span `reconcile` per
 * reconcile and a child span per step (fetch, render, plan, apply, health wait), exported in batches over
 * OTLP/HTTP to --otlp-traces-endpoint.
 * Attributes are names, revisions and reasons only (ports.ts: ReconcileTrace).
 */
import type * as OtelApi from '@opentelemetry/api';
import type { Span, Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { ReconcileTrace, TracedStep, Tracing } from '../../core/tracing.ts';

type Api = typeof OtelApi;

export interface OtlpTracing extends Tracing {
  /** Exports what is buffered now. */
  flush(): Promise<void>;
  /** Exports what is buffered and stops (shutdown). */
  shutdown(): Promise<void>;
}

/**
 * `endpoint`: the OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces. The SDK is imported here, when
 * tracing is on: a controller without an endpoint never loads it (~6 MiB of RSS at start, session 21).
 */
export async function otlpTracing(
  endpoint: string,
  opts: { version: string; exporter?: SpanExporter },
): Promise<OtlpTracing> {
  const [api, { OTLPTraceExporter }, { resourceFromAttributes }, { BatchSpanProcessor, TracerProvider }] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace'),
    ]);
  const exporter = opts.exporter ?? new OTLPTraceExporter({ url: endpoint });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'packagesync', 'service.version': opts.version }),
    // a reconcile is a handful of spans; batches of a second keep the export off the reconcile's path
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 1_000 })],
  });
  const tracer = provider.getTracer('packagesync.io/reconcile', opts.version);
  return {
    reconcile: (namespace, name) => reconcileTrace(api, tracer, namespace, name),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

function reconcileTrace(api: Api, tracer: Tracer, namespace: string, name: string): ReconcileTrace {
  const { context, SpanStatusCode, trace } = api;
  const root = tracer.startSpan('reconcile', {
    // a root per reconcile: a queue worker's ambient context is never this reconcile's parent
    root: true,
    attributes: { 'packagesync.namespace': namespace, 'packagesync.name': name },
  });
  const parent = trace.setSpan(context.active(), root);
  return {
    async step<T>(step: TracedStep, fn: () => Promise<T>): Promise<T> {
      const span = tracer.startSpan(step, {}, parent);
      try {
        const result = await context.with(trace.setSpan(parent, span), fn);
        failedWith(api, span, result);
        return result;
      } catch (e) {
        // the error's text may quote what it read: only its kind
        span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error)?.name ?? 'Error' });
        throw e;
      } finally {
        span.end();
      }
    },
    set: (attributes) => root.setAttributes(attributes),
    end({ failed, reason }) {
      if (failed) root.setStatus({ code: SpanStatusCode.ERROR, ...(reason ? { message: reason } : {}) });
      root.end();
    },
  };
}

/** A step's Result that failed: its reason (a condition reason, PascalCase) is the span's error. */
function failedWith({ SpanStatusCode }: Api, span: Span, result: unknown): void {
  const r = result as { ok?: boolean; failure?: { reason?: unknown } } | undefined;
  if (r && r.ok === false) {
    const reason = typeof r.failure?.reason === 'string' ? r.failure.reason : 'Failed';
    span.setAttribute('packagesync.reason', reason);
    span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
  }
}
