import type { Status } from '../../api/packagesync.ts';
import type { HealthSummary } from '../health/index.ts';
import { sameInventory, type InventoryEntry } from '../inventory.ts';
import { isReadyFor } from '../status.ts';
import type { ChangePlan } from './plan-changes.ts';

export interface SettledInput {
  plan: ChangePlan;
  /** spec.prune: without it, objects that left the package are not a reason to act. */
  prune: boolean;
  /** spec.wait: without it, health is not a reason to act. */
  wait: boolean;
  /** The revision just resolved. */
  revision: string;
  status: Status | undefined;
  generation: number | undefined;
  inventory: readonly InventoryEntry[];
  /** Health of the desired objects as the live read found them. */
  health: HealthSummary;
}

/**
 * Nothing to do: same revision and generation already Ready, nothing drifted, nothing to prune, the
 * inventory already right, all healthy. The reconcile then writes nothing at all (a no-op resync costs reads
 * only).
 */
export function isSettled(s: SettledInput): boolean {
  return (
    s.plan.toApply.size === 0 &&
    (!s.prune || s.plan.prune.length === 0) &&
    s.status?.lastAppliedRevision === s.revision &&
    isReadyFor(s.status, s.generation) &&
    (!s.wait || s.health.status === 'Current') &&
    sameInventory(s.inventory, s.plan.inventoryAfter)
  );
}
