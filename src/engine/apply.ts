/**
 * Step 5a: server-side apply, wave by wave. Inside a wave, applies run concurrently (bounded); a wave
 * starts only when the previous one fully succeeded, and new CRDs must be Established (and discovery
 * refreshed) before the wave holding their custom resources. The first failing wave ends the apply:
 * nothing after it is applied, and the caller prunes nothing.
 */
import PQueue from 'p-queue';
import { Reason } from '../api/reasons.ts';
import { applyFailure, type Objects } from '../adapters/kube/objects.ts';
import { isNotFound } from '../adapters/kube/client.ts';
import { fail, ok, type Failure, type Result } from '../core/failure.ts';
import type { Change } from '../core/plan/changeset.ts';
import { describeRef, refKey, refOf, type KubeObject } from '../core/object.ts';

export interface ApplyResult {
  /** created / configured / unchanged, per object handled before the apply ended. */
  changes: Change[];
  /** The object as the server stored it (status included), for objects that were sent. */
  stored: Map<string, KubeObject>;
  /** The first failures (one per failed object) of the wave that failed; empty on success. */
  failures: Failure[];
}

export interface ApplyOptions {
  force: boolean;
  /** Objects being adopted: they take over fields from the managers that created them (docs/adr/0006). */
  adopt?: ReadonlySet<string>;
  signal: AbortSignal;
  concurrency: number;
  /** Budget for a new CRD to become Established. */
  establishTimeoutMs?: number;
}

export async function applyWaves(
  objects: Objects,
  waves: KubeObject[][],
  needsApply: (obj: KubeObject) => boolean,
  opts: ApplyOptions,
): Promise<ApplyResult> {
  const result: ApplyResult = { changes: [], stored: new Map(), failures: [] };
  const queue = new PQueue({ concurrency: opts.concurrency });
  for (const wave of waves) {
    const sends = wave.filter((o) => {
      if (needsApply(o)) return true;
      result.changes.push({ ref: refOf(o), action: 'unchanged' });
      return false;
    });
    await Promise.all(
      sends.map((obj) =>
        queue.add(async () => {
          if (opts.signal.aborted || result.failures.length > 0) return;
          const applied = await applyOne(objects, obj, opts, result);
          if (!applied.ok) result.failures.push(applied.failure);
        }),
      ),
    );
    if (result.failures.length > 0) return result;
    if (opts.signal.aborted) {
      result.failures.push({
        reason: Reason.ApplyFailed,
        message: 'apply cancelled: a newer revision or shutdown',
        terminal: false,
      });
      return result;
    }
    const crds = sends.filter(
      (o) => o.kind === 'CustomResourceDefinition' && o.apiVersion.startsWith('apiextensions.k8s.io/'),
    );
    if (crds.length > 0) {
      const established = await waitEstablished(objects, crds, opts);
      const served = established.ok ? await waitServed(objects, crds, opts) : established;
      if (!served.ok) {
        result.failures.push(served.failure);
        return result;
      }
    }
  }
  return result;
}

async function applyOne(
  objects: Objects,
  obj: KubeObject,
  opts: ApplyOptions,
  result: ApplyResult,
): Promise<Result<void>> {
  const key = refKey(refOf(obj));
  try {
    const force = opts.force || (opts.adopt?.has(key) ?? false);
    const res = await objects.apply(obj, { force, signal: opts.signal });
    result.changes.push({ ref: refOf(obj), action: res.created ? 'created' : 'configured' });
    result.stored.set(key, res.object);
    return ok(undefined);
  } catch (e) {
    const failure = applyFailure(obj, e);
    if (failure.reason !== Reason.ImmutableFieldChange || !opts.force) return { ok: false, failure };
    // spec.force: delete, wait until it is gone, create it again
    const recreated = await recreate(objects, obj, opts);
    if (!recreated.ok) return recreated;
    result.changes.push({ ref: refOf(obj), action: 'created' });
    result.stored.set(key, recreated.value);
    return ok(undefined);
  }
}

async function recreate(objects: Objects, obj: KubeObject, opts: ApplyOptions): Promise<Result<KubeObject>> {
  const ref = refOf(obj);
  try {
    const deleted = await objects.delete(ref, { signal: opts.signal });
    const held = deleted.gone ? '' : ` (finalizers: ${deleted.finalizers.join(', ')})`;
    const deadline = Date.now() + 60_000;
    while (await objects.get(ref, { signal: opts.signal })) {
      if (Date.now() > deadline || opts.signal.aborted) {
        const message = `${describeRef(ref)}: deleted to recreate it, but it is still terminating${held}`;
        return fail(Reason.ImmutableFieldChange, message, { object: ref });
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    const res = await objects.apply(obj, { force: true, signal: opts.signal });
    return ok(res.object);
  } catch (e) {
    return { ok: false, failure: applyFailure(obj, e) };
  }
}

async function waitEstablished(objects: Objects, crds: KubeObject[], opts: ApplyOptions): Promise<Result<void>> {
  const deadline = Date.now() + (opts.establishTimeoutMs ?? 30_000);
  for (const crd of crds) {
    const ref = refOf(crd);
    for (;;) {
      let live: KubeObject | undefined;
      try {
        live = await objects.get(ref, { signal: opts.signal });
      } catch (e) {
        if (!isNotFound(e)) return { ok: false, failure: applyFailure(crd, e) };
      }
      const conditions =
        (live?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline || opts.signal.aborted) {
        return fail(
          Reason.ApplyFailed,
          `${describeRef(ref)} was applied but did not become Established; its custom resources were not applied`,
          { object: ref },
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return ok(undefined);
}

/**
 * Established is not the end: the API server's discovery documents lag a moment behind it. Refresh our
 * discovery until every new CRD's kind is served, so the next wave's custom resources find their REST
 * mapping instead of failing with UnknownKind and a back-off.
 */
async function waitServed(objects: Objects, crds: KubeObject[], opts: ApplyOptions): Promise<Result<void>> {
  const deadline = Date.now() + (opts.establishTimeoutMs ?? 30_000);
  const kinds = crds.map((crd) => {
    const spec = (crd.spec ?? {}) as { group?: string; names?: { kind?: string } };
    return { crd, group: spec.group ?? '', kind: spec.names?.kind ?? '' };
  });
  for (;;) {
    await objects.discovery.refresh();
    const missing = kinds.find((k) => objects.discovery.isNamespaced(k.group, k.kind) === undefined);
    if (!missing) return ok(undefined);
    if (Date.now() > deadline || opts.signal.aborted) {
      return fail(
        Reason.ApplyFailed,
        `${describeRef(refOf(missing.crd))} is Established but the API server does not serve kind ${missing.kind} yet; its custom resources were not applied`,
        { object: refOf(missing.crd) },
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
