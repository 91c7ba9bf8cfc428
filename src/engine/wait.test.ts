import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryWorld } from '../../test/engine/memory-ports.ts';
import { available, deployment, starting } from '../../test/support/workloads.ts';
import { compileHealthChecks, type CauseLink } from '../core/health/index.ts';
import { refKey, refOf, type KubeObject, type ObjectRef } from '../core/object.ts';
import type { HealthSource } from './health-source.ts';
import { untilCurrent, untilServed, waitUntilHealthy } from './wait.ts';

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

// The apply's waits between an object and its dependents (apply.ts), on in-memory objects and a fake clock: what
// ends them is the object's state or the budget's abort, never a pause running out.
describe('the waits of the apply: untilCurrent, untilServed', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const crd: KubeObject = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.example.com' },
    spec: { group: 'example.com', names: { kind: 'Gadget' } },
  };
  const established = { conditions: [{ type: 'Established', status: 'True' }] };
  const rules = () => {
    const compiled = compileHealthChecks([
      {
        apiVersion: 'example.com/v1',
        kind: 'Gadget',
        current: 'false',
        failed: "status.conditions.exists(e, e.reason == 'Backend')",
      },
    ]);
    if (!compiled.ok) throw new Error(compiled.failure.message);
    return compiled.value;
  };

  it('untilCurrent: a copy Current at once costs no read; one never Current ends when the budget is aborted', async () => {
    vi.useFakeTimers();
    const w = memoryWorld();
    let reads = 0;
    const objects = { ...w.ports.objects, get: async () => (reads++, deployment('web', starting)) };
    const budget = new AbortController();
    expect(await untilCurrent(objects, refOf(gadget('True')), gadget('True'), { signal: budget.signal })).toBe(
      undefined,
    );
    expect(reads).toBe(0);
    const waiting = untilCurrent(objects, refOf(deployment('web', {})), deployment('web', starting), {
      signal: budget.signal,
    });
    await vi.advanceTimersByTimeAsync(1_000);
    const readsBefore = reads;
    expect(readsBefore).toBeGreaterThan(0);
    budget.abort(); // asleep between two reads: the pause ends now, not when its timer would
    const health = await waiting;
    expect(health?.status).toBe('InProgress');
    expect(health?.message).toContain("when the reconcile's time ran out");
    expect(reads).toBe(readsBefore);
  });

  it('untilCurrent: a Failed object ends the wait with its health', async () => {
    const w = memoryWorld();
    const health = await untilCurrent(w.ports.objects, refOf(gadget('False')), gadget('False'), {
      signal: new AbortController().signal,
      healthRules: rules(),
    });
    expect(health?.status).toBe('Failed');
  });

  it('untilServed: ok once the CRD is Established and discovery serves its kind', async () => {
    const w = memoryWorld();
    w.cluster.put({ ...crd, status: established });
    let refreshed = 0;
    const discovery = {
      ...w.ports.objects.discovery,
      refresh: async () => void refreshed++,
      isNamespaced: (group: string, kind: string) => (group === 'example.com' && kind === 'Gadget') || undefined,
    };
    const objects = { ...w.ports.objects, discovery };
    expect(await untilServed(objects, crd, { signal: new AbortController().signal })).toEqual({
      ok: true,
      value: undefined,
    });
    expect(refreshed).toBe(1);
  });

  it('untilServed: a CRD not Established when the budget is aborted fails ApplyFailed naming it, at once', async () => {
    vi.useFakeTimers();
    const w = memoryWorld();
    w.cluster.put(crd);
    const budget = new AbortController();
    const waiting = untilServed(w.ports.objects, crd, { signal: budget.signal });
    await vi.advanceTimersByTimeAsync(500);
    budget.abort();
    const served = await waiting;
    expect(served.ok).toBe(false);
    if (served.ok) return;
    expect(served.failure.reason).toBe('ApplyFailed');
    expect(served.failure.message).toContain('gadgets.example.com');
    expect(served.failure.message).toContain('did not become Established');
  });

  it('untilServed: Established but never served fails naming the kind', async () => {
    const w = memoryWorld();
    w.cluster.put({ ...crd, status: established });
    const budget = new AbortController();
    budget.abort();
    const served = await untilServed(w.ports.objects, crd, { signal: budget.signal });
    expect(served.ok).toBe(false);
    if (!served.ok) expect(served.failure.message).toContain('does not serve kind Gadget');
  });
});
