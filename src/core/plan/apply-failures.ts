import { Reason } from '../../api/reasons.ts';
import type { Failure } from '../failure.ts';

/**
 * Every failure of a best-effort apply as the one Failure the Ready condition carries: the first object
 * that failed by itself (apply order) heads it, with how many more failed and how many were skipped
 * because something they need failed. The whole list goes to status.failures.
 */
export function summarizeApplyFailures(failures: readonly Failure[]): Failure {
  const head = failures.find((f) => f.reason !== Reason.DependencyFailed) ?? failures[0]!;
  const rest = failures.filter((f) => f !== head);
  const skipped = rest.filter((f) => f.reason === Reason.DependencyFailed).length;
  const otherFailed = rest.length - skipped;
  const more = [
    ...(otherFailed > 0 ? [`${otherFailed} more failed`] : []),
    ...(skipped > 0 ? [`${skipped} skipped because a dependency failed`] : []),
  ];
  // Terminal only when every failure is: one that a retry may clear keeps the PackageSync retrying.
  const terminal = failures.every((f) => f.terminal);
  return { ...head, message: more.length > 0 ? `${head.message} (and ${more.join(', ')})` : head.message, terminal };
}
