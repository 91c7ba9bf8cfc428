/**
 * Every object carrying a PackageSync's owner labels, of every kind the cluster serves: what `diff`
 * reports as prunable when no inventory exists (no PackageSync, no inventory ConfigMap). One labelled
 * LIST per kind; kinds the caller may not list are counted, not fatal, so the answer says how complete
 * it is.
 */
import { KubeApiError } from '../adapters/kube/client.ts';
import type { Objects } from '../engine/ports.ts';
import { refKey, refOf, type KubeObject } from '../core/object.ts';
import { ownerSelector, type Owner } from '../core/plan/ownership.ts';

export interface OwnedObjects {
  byKey: Map<string, KubeObject>;
  /** Kinds that could not be listed (forbidden), e.g. `secrets`. */
  unreadable: string[];
}

export async function findOwnedObjects(objects: Objects, owner: Owner): Promise<OwnedObjects> {
  const byKey = new Map<string, KubeObject>();
  const unreadable: string[] = [];
  const selector = ownerSelector(owner);
  const mappings = await objects.discovery.listable();
  await Promise.all(
    mappings.map(async (m) => {
      try {
        for (const o of await objects.list(m, '', selector)) byKey.set(refKey(refOf(o)), o);
      } catch (e) {
        if (e instanceof KubeApiError && (e.status === 403 || e.status === 401)) unreadable.push(m.resource);
        else if (!(e instanceof KubeApiError && (e.status === 404 || e.status === 405))) throw e;
      }
    }),
  );
  return { byKey, unreadable: unreadable.sort() };
}
