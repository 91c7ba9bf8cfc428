import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';

export interface PruneBudget {
  /** Deletions one reconcile may always make. */
  maxDeletions: number;
  /** Beyond maxDeletions, the most of the inventory (percent) one reconcile may delete. */
  maxPercent: number;
}

export interface PruneBudgetInput {
  /** Objects this reconcile would delete. */
  deletions: number;
  /** Objects the inventory lists now. */
  inventory: number;
  budget: PruneBudget;
  /** The revision being applied, and the one the prune-approved annotation names (if any). */
  revision: string;
  approved: string | undefined;
  /** `kubectl annotate …` target, for the message: `pks/<name> -n <namespace>`. */
  target: string;
  annotation: string;
}

/**
 * A package that suddenly drops most of what it applied is more often a mistake (a wrong path, a bad merge, an
 * overlay that lost its bases) than an intent. Past the budget the whole reconcile stops before anything is
 * applied or deleted, and says how to approve this one revision; the next revision is judged afresh.
 */
export function checkPruneBudget(input: PruneBudgetInput): Result<void> {
  const { deletions, inventory, budget } = input;
  if (deletions <= budget.maxDeletions) return ok(undefined);
  const percent = inventory === 0 ? 100 : Math.round((deletions / inventory) * 100);
  if (percent <= budget.maxPercent) return ok(undefined);
  if (input.approved === input.revision) return ok(undefined);
  return fail(
    Reason.PruneBudgetExceeded,
    `revision ${input.revision} would delete ${deletions} of the ${inventory} objects in the inventory (${percent}%): ` +
      `more than spec.pruneBudget allows (${budget.maxDeletions} objects, or ${budget.maxPercent}% of the ` +
      'inventory); nothing was applied or deleted. If that is intended, approve this revision: kubectl annotate ' +
      `${input.target} ${input.annotation}=${input.revision} --overwrite (or raise spec.pruneBudget)`,
    { terminal: true },
  );
}
