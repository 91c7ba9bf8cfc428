import { describe, expect, it } from 'vitest';
import { available, deployment, starting } from '../../test/support/workloads.ts';
import { compileHealthChecks, type CauseLink } from '../core/health/index.ts';
import { refKey, refOf, type KubeObject, type ObjectRef } from '../core/object.ts';
import type { HealthSource } from './health-source.ts';
import { waitUntilHealthy } from './wait.ts';

const gadget = (ready: 'True' | 'False'): KubeObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Gadget',
  metadata: { name: 'g', namespace: 'team-a' },
  status: { conditions: [{ type: 'Ready', status: ready, reason: 'Backend', message: 'backend refused' }] },
});

/** A source whose live state the test changes; `changed` resolves when the test calls `change`. */
function fakeSource(initial: KubeObject[], children: KubeObject[] = []) {
  let live = initial;
  let wake: (() => void) | undefined;
  const calls = { reads: 0, children: [] as number[] };
  const source: HealthSource = {
    read: async (refs: readonly ObjectRef[]) => {
      calls.reads++;
      const wanted = new Set(refs.map(refKey));
      return new Map(live.filter((o) => wanted.has(refKey(refOf(o)))).map((o) => [refKey(refOf(o)), o]));
    },
    children: async (workloads) => (calls.children.push(workloads.length), workloads.length ? children : []),
    changed: (maxMs, signal) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(resolve, maxMs);
        wake = () => (clearTimeout(t), resolve());
        signal.addEventListener('abort', () => wake?.());
      }),
    close: () => undefined,
  };
  return {
    source,
    calls,
    change(next: KubeObject[]) {
      live = next;
      wake?.();
    },
  };
}

const opts = (signal = new AbortController().signal) => ({ signal, timeoutMs: 5_000, known: new Map() });

describe('waitUntilHealthy', () => {
  it('wakes on a change instead of polling, and ends when everything is Current', async () => {
    const f = fakeSource([deployment('web', starting)]);
    const progress: string[] = [];
    const waiting = waitUntilHealthy(f.source, [deployment('web', {})], {
      ...opts(),
      onProgress: (s) => void progress.push(s.message),
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(f.calls.reads).toBe(1); // asleep until the source says something changed
    f.change([deployment('web', available)]);
    const done = await waiting;
    expect(done.ok).toBe(true);
    expect(f.calls.reads).toBe(2);
    expect(progress).toEqual(['1 object in progress: Deployment/team-a/web (0 of 1 replicas available)']);
    // children were asked for while the Deployment was not Current, and let go once it was
    expect(f.calls.children).toEqual([1, 0]);
  });

  it('ends at once when an object fails, naming it', async () => {
    const crashing: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-1',
        namespace: 'team-a',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'rs', controller: true }],
      },
      status: { phase: 'Failed', reason: 'Evicted', message: 'low on memory' },
    };
    const f = fakeSource([deployment('web', starting), gadget('False'), crashing], [crashing]);
    const started = Date.now();
    const done = await waitUntilHealthy(f.source, [deployment('web', {}), { ...crashing }, gadget('False')], opts());
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(done).toMatchObject({
      ok: false,
      failure: {
        reason: 'HealthCheckFailed',
        message: 'health check failed: Pod/team-a/web-1 (Evicted: low on memory) (also 2 objects not Current yet)',
      },
    });
  });

  it('at the timeout, names every object that is not Current with its cause', async () => {
    const f = fakeSource([deployment('web', starting), gadget('False'), deployment('api', available)]);
    const done = await waitUntilHealthy(
      f.source,
      [deployment('api', {}), deployment('web', {}), gadget('False'), deployment('gone', {})],
      { ...opts(), timeoutMs: 100 },
    );
    expect(done).toMatchObject({
      ok: false,
      failure: {
        message:
          'timeout waiting for health: 3 objects not Current: Deployment/team-a/gone (object not found); ' +
          'Deployment/team-a/web (0 of 1 replicas available); Gadget.example.com/team-a/g (backend refused)',
      },
    });
    if (!done.ok) expect(done.failure.object).toMatchObject({ name: 'gone' });
  });

  it('stops when its signal fires, as Superseded (not a health failure)', async () => {
    const f = fakeSource([gadget('False')]);
    const cancel = new AbortController();
    const waiting = waitUntilHealthy(f.source, [gadget('False')], opts(cancel.signal));
    await new Promise((r) => setTimeout(r, 20));
    cancel.abort();
    expect(await waiting).toMatchObject({ ok: false, failure: { reason: 'Superseded' } });
  });

  it('uses the copy the apply returned while the watch has not delivered the change yet', async () => {
    const applied = deployment('web', available, 2);
    // the cache still holds generation 1, Available: without the floor this would be Current too early
    const f = fakeSource([deployment('web', available, 1)]);
    const waiting = waitUntilHealthy(f.source, [applied], {
      ...opts(),
      known: new Map([[refKey(refOf(applied)), applied]]),
    });
    await new Promise((r) => setTimeout(r, 20));
    f.change([deployment('web', { ...available, observedGeneration: 2 }, 2)]);
    expect((await waiting).ok).toBe(true);
    expect(f.calls.reads).toBe(2);
  });
});

describe('waitUntilHealthy with spec.healthCheckExprs', () => {
  it('judges a kind by its CEL rule, fails fast on `failed`, and names the rule as the cause', async () => {
    const rules = compileHealthChecks([
      {
        apiVersion: 'example.com/v1',
        kind: 'Gadget',
        current: 'false',
        failed: "status.conditions.exists(e, e.reason == 'Backend')",
      },
    ]);
    if (!rules.ok) throw new Error(rules.failure.message);
    // kstatus alone would wait on Ready=True; the rule says failed
    const f = fakeSource([gadget('True')]);
    const causes: (readonly CauseLink[])[] = [];
    const done = await waitUntilHealthy(f.source, [gadget('True')], {
      ...opts(),
      rules: rules.value,
      observed: (_s, cause) => void causes.push(cause),
    });
    expect(done.ok).toBe(false);
    expect(!done.ok && done.failure.message).toMatch(
      /^health check failed: Gadget\.example\.com\/team-a\/g \(healthCheckExprs Gadget\.example\.com failed: /,
    );
    expect(causes.at(-1)).toEqual([
      expect.objectContaining({ kind: 'Gadget.example.com', name: 'g', reason: 'HealthCheckExprFailed' }),
    ]);
  });
});
