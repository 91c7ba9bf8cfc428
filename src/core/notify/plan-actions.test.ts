import { describe, expect, it } from 'vitest';
import type { Change } from '../plan/changeset.ts';
import { PLAN_LINES_MAX, planActionsMarkdown, planActionsOf } from './plan-actions.ts';

const ref = (kind: string, name: string, group = '') => ({ group, kind, namespace: 'team-a', name });

describe("a pull-request comment's object list", () => {
  it('lists changes in apply order by action and ref only, counting unchanged objects instead of listing them', () => {
    const changes: Change[] = [
      { ref: ref('Secret', 'db'), action: 'configured', message: 'value s3cr3t refused' },
      { ref: ref('Widget', 'w', 'example.com'), action: 'created' },
      { ref: ref('ConfigMap', 'old'), action: 'pruned' },
      { ref: ref('ConfigMap', 'same'), action: 'unchanged' },
      { ref: ref('Job', 'migrate', 'batch'), action: 'failed', message: 'token abc' },
    ];
    const plan = planActionsOf(changes);
    expect(plan).toEqual({
      lines: [
        { action: 'configured', object: 'Secret/team-a/db' },
        { action: 'created', object: 'Widget.example.com/team-a/w' },
        { action: 'pruned', object: 'ConfigMap/team-a/old' },
        { action: 'failed', object: 'Job/team-a/migrate' },
      ],
      total: 4,
      unchanged: 1,
    });
    const md = planActionsMarkdown(plan, undefined).join('\n');
    expect(md).toContain('| ! | failed | `Job/team-a/migrate` |');
    expect(md).not.toMatch(/s3cr3t|abc/);
    expect(md).not.toContain('more not listed');
  });

  it(`is cut at ${PLAN_LINES_MAX} lines with a count, and an object name too long is clipped`, () => {
    const changes: Change[] = Array.from({ length: 45 }, (_, i) => ({
      ref: ref('ConfigMap', i === 0 ? 'x'.repeat(300) : `cm-${i}`),
      action: 'created',
    }));
    const plan = planActionsOf(changes);
    expect(plan.lines).toHaveLength(PLAN_LINES_MAX);
    expect(plan.lines[0]!.object).toHaveLength(160);
    expect(plan.lines[0]!.object.endsWith('…')).toBe(true);
    expect(planActionsMarkdown(plan, undefined)).toContain('…and 15 more not listed (45 changed in all).');
  });

  it('says when nothing changed, and why a list is missing; backticks and pipes in names stay inside the cell', () => {
    expect(planActionsMarkdown(planActionsOf([{ ref: ref('A', 'a'), action: 'unchanged' }]), undefined)).toEqual([
      'No object changed (1 unchanged).',
      '',
    ]);
    expect(planActionsMarkdown(undefined, 'the controller restarted')[0]).toBe(
      '_The object list is not available: the controller restarted._',
    );
    const md = planActionsMarkdown(planActionsOf([{ ref: ref('A', 'a`|b'), action: 'created' }]), undefined);
    expect(md).toContain('| + | created | `A/team-a/a\\`\\|b` |');
  });
});
