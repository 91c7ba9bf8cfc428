/**
 * A trace per reconcile (docs/adr/0043), read back from a real Jaeger (built from its Go module) through its query
 * API: the controller started with --otlp-traces-endpoint exports the root span and one span per step (fetch,
 * render, plan, apply, health wait); a failed step carries its reason; the git password reaches no span.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kube } from './support/cluster.ts';
import { waitCondition, waitReady } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { startJaeger, type TestJaeger } from '../test/support/jaeger.ts';

const PASSWORD = 'tr4ced-Pa55word-e2e';
let env: GitEnvWithController;
let jaeger: TestJaeger;

beforeAll(async () => {
  jaeger = await startJaeger();
  env = await startGitEnv(
    { args: ['--otlp-traces-endpoint', jaeger.otlpTracesUrl] },
    { auth: { username: 'platform', password: PASSWORD } },
  );
});
afterAll(async () => {
  await env?.dispose();
  await jaeger?.stop();
});

interface JaegerSpan {
  spanID: string;
  operationName: string;
  references: { refType: string; spanID: string }[];
  tags: { key: string; value: unknown }[];
}
interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
}

/** Jaeger's query API (the one its UI reads): the traces of service packagesync tagged with this namespace. */
async function tracesOf(ns: string): Promise<JaegerTrace[]> {
  const q = new URLSearchParams({
    service: 'packagesync',
    tags: JSON.stringify({ 'packagesync.namespace': ns }),
    limit: '50',
    lookback: '1h',
  });
  const res = await fetch(`${jaeger.queryUrl}/api/traces?${q}`);
  if (!res.ok) throw new Error(`jaeger query: HTTP ${res.status}`);
  return ((await res.json()) as { data: JaegerTrace[] | null }).data ?? [];
}

const tag = (s: JaegerSpan, key: string) => s.tags.find((t) => t.key === key)?.value;
const STEPS = ['fetch', 'render', 'plan', 'apply', 'health wait'];

async function gitSecret(ns: string): Promise<void> {
  await (
    await kube()
  ).request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'git-auth' },
      stringData: { username: 'platform', password: PASSWORD },
    },
  });
}

describe('OpenTelemetry traces in Jaeger', () => {
  it('a reconcile that applies: one trace, a root span and a child span per step, the revision on the root', async () => {
    const ns = await env.namespace('e2e-trace');
    await gitSecret(ns);
    const { url, sha } = await env.repo('traced', { 'cm.yaml': configMap('a', { k: 'v' }) });
    await env.sync(ns, 'web', { source: { url, secretRef: { name: 'git-auth' } } });
    await waitReady(ns, 'web');
    const trace = await eventually(
      'a trace with every step in Jaeger',
      async () =>
        (await tracesOf(ns)).find((t) => STEPS.every((step) => t.spans.some((s) => s.operationName === step))),
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    const root = trace.spans.find((s) => s.operationName === 'reconcile')!;
    expect(root).toBeDefined();
    expect(tag(root, 'packagesync.name')).toBe('web');
    expect(tag(root, 'packagesync.revision')).toBe(`main@sha1:${sha}`);
    for (const step of STEPS) {
      const span = trace.spans.find((s) => s.operationName === step)!;
      expect(span.references).toContainEqual(expect.objectContaining({ refType: 'CHILD_OF', spanID: root.spanID }));
      expect(tag(span, 'error')).toBeUndefined();
    }
    expect(JSON.stringify(await tracesOf(ns))).not.toContain(PASSWORD);
  });

  it('a reconcile that fails: the failing step and the root are errors, the step names the reason', async () => {
    const ns = await env.namespace('e2e-trace-fail');
    await gitSecret(ns);
    const { url } = await env.repo('traced-fail', { 'app/cm.yaml': configMap('a', { k: 'v' }) });
    await env.sync(ns, 'web', { source: { url, path: 'missing', secretRef: { name: 'git-auth' } } });
    await waitCondition(ns, 'web', 'Ready', 'False', 'PathNotFound');
    const failed = await eventually(
      'a span failed with PathNotFound',
      async () => {
        for (const t of await tracesOf(ns)) {
          const span = t.spans.find((s) => tag(s, 'packagesync.reason') === 'PathNotFound');
          if (span) return { t, span };
        }
        return undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    expect(tag(failed.span, 'error')).toBe(true);
    const root = failed.t.spans.find((s) => s.operationName === 'reconcile')!;
    expect(tag(root, 'error')).toBe(true);
    // nothing after the failed step ran: no apply span in that trace
    expect(failed.t.spans.map((s) => s.operationName)).not.toContain('apply');
    expect(JSON.stringify(await tracesOf(ns))).not.toContain(PASSWORD);
  });
});
