/**
 * Reads the objects that depends-on annotations name outside the package: the plan accepts such a
 * dependency only when it exists (core/plan/graph.ts), and the apply waits until it is Current.
 */
import type { PackageObjects } from './ports.ts';
import { fail, ok, type Result } from '../core/failure.ts';
import { refKey, type KubeObject } from '../core/object.ts';
import { externalDependencies } from '../core/plan/depends-on.ts';
import { Reason } from '../api/reasons.ts';

export async function readExternalDependencies(
  objects: PackageObjects,
  desired: readonly KubeObject[],
  opts: { signal?: AbortSignal },
): Promise<Result<Map<string, KubeObject>>> {
  const found = new Map<string, KubeObject>();
  try {
    await Promise.all(
      externalDependencies(desired).map(async (ref) => {
        const live = await objects.get(ref, opts);
        if (live) found.set(refKey(ref), live);
      }),
    );
  } catch (e) {
    const err = e as { status?: number; message?: string };
    if (err.status === 403) return fail(Reason.Forbidden, `reading depends-on dependencies: forbidden: ${err.message}`);
    return fail(Reason.ApplyFailed, `reading depends-on dependencies: ${err.message ?? String(e)}`);
  }
  return ok(found);
}
