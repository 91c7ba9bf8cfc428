/**
 * The tracing port (docs/adr/0043): the engine opens one trace per reconcile and a span per step; an adapter
 * (src/adapters/otel) exports them. Plain types here, so the engine and the adapter both depend on core, not on
 * each other.
 */
/** The steps of one reconcile that get a span each (docs/adr/0043). */
export type TracedStep = 'fetch' | 'render' | 'plan' | 'apply' | 'health wait';

/**
 * A trace of one reconcile: a span per step, under one root. Attributes are names, revisions, counts and reasons
 * only: never a URL, a message or anything read from a Secret (a message can quote a file).
 */
export interface ReconcileTrace {
  step<T>(name: TracedStep, fn: () => Promise<T>): Promise<T>;
  /** Attributes on the root span (revision, …). */
  set(attributes: Record<string, string | number | boolean>): void;
  /** Ends the root span: ok, or failed with a condition reason. */
  end(outcome: { failed: boolean; reason?: string }): void;
}

export interface Tracing {
  reconcile(namespace: string, name: string): ReconcileTrace;
}

/** What the engine uses when no tracing is configured. */
export const NO_TRACE: ReconcileTrace = {
  step: (_name, fn) => fn(),
  set: () => undefined,
  end: () => undefined,
};
