/**
 * What a revision's apply did, object by object, for its pull-request comment (docs/adr/0043): the engine's
 * changes as `action` + object ref only (never a message, a field or a value: a failed object's message can quote
 * what was sent), in apply order, bounded, and cut with a count that says so. Unchanged objects are not news: they
 * are counted, not listed.
 */
import type { Change, ChangeAction } from '../plan/changeset.ts';
import { describeRef } from '../object.ts';

export interface PlanActions {
  /** The first PLAN_LINES_MAX changes other than unchanged, in apply order. */
  lines: { action: Exclude<ChangeAction, 'unchanged'>; object: string }[];
  /** Changes other than unchanged, listed or not. */
  total: number;
  unchanged: number;
}

/** A comment stays readable, and an outbox of comments stays small (each message's list is at most ~6 KiB). */
export const PLAN_LINES_MAX = 30;
const OBJECT_MAX = 160;
/** At most this many messages in one outbox carry a list (~240 KiB in all): past it, a comment says it has none. */
export const PLANS_IN_OUTBOX_MAX = 40;

export function planActionsOf(changes: readonly Change[]): PlanActions {
  const changed = changes.filter((c) => c.action !== 'unchanged');
  return {
    lines: changed.slice(0, PLAN_LINES_MAX).map((c) => ({
      action: c.action as PlanActions['lines'][number]['action'],
      object: clip(describeRef(c.ref)),
    })),
    total: changed.length,
    unchanged: changes.length - changed.length,
  };
}

const clip = (s: string) => (s.length > OBJECT_MAX ? `${s.slice(0, OBJECT_MAX - 1)}…` : s);

const MARK: Record<PlanActions['lines'][number]['action'], string> = {
  created: '+',
  configured: '~',
  pruned: '-',
  skipped: '!',
  failed: '!',
};

/** Markdown cells and inline code: a pipe ends a cell, a backtick ends code, a newline ends both. */
const inline = (s: string) => s.replace(/[|`]/g, (c) => `\\${c}`).replace(/\s*\n\s*/g, ' ');

/**
 * The comment's action list, folded as the `plan` markdown folds its details; `missing` says why there is none
 * (the controller restarted between the apply and the comment, or the outbox held too many lists).
 */
export function planActionsMarkdown(plan: PlanActions | undefined, missing: string | undefined): string[] {
  if (!plan) return missing ? [`_The object list is not available: ${inline(missing)}._`, ''] : [];
  if (plan.total === 0) return [`No object changed (${plan.unchanged} unchanged).`, ''];
  const lines = [
    `<details><summary>${plan.total} object${plan.total === 1 ? '' : 's'} changed</summary>`,
    '',
    '| | action | object |',
    '|---|---|---|',
    ...plan.lines.map((l) => `| ${MARK[l.action]} | ${l.action} | \`${inline(l.object)}\` |`),
    '',
  ];
  const more = plan.total - plan.lines.length;
  if (more > 0) lines.push(`…and ${more} more not listed (${plan.total} changed in all).`, '');
  if (plan.unchanged > 0) lines.push(`${plan.unchanged} unchanged, not listed.`, '');
  lines.push('</details>', '');
  return lines;
}
