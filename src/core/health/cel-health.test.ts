import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { celHealth, compileHealthChecks, type HealthCheckExpr } from './cel-health.ts';

const widget = (status?: Record<string, unknown>, generation = 2): KubeObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'a', generation },
  ...(status ? { status } : {}),
});

const cond = (type: string, status: string, observedGeneration = 2) => ({ type, status, observedGeneration });

// cert-manager's Certificate rule from Flux's RFC-0009, on a Widget; inProgress with exists(): all() of the
// empty list (no Issuing condition) is true, which would hold every Widget in progress
const certificateLike: HealthCheckExpr = {
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  inProgress:
    "status.conditions.exists(e, e.type == 'Issuing' && e.observedGeneration == metadata.generation && e.status == 'True')",
  failed:
    "status.conditions.filter(e, e.type == 'Ready').all(e, e.observedGeneration == metadata.generation && e.status == 'False')",
  current:
    "status.conditions.filter(e, e.type == 'Ready').all(e, e.observedGeneration == metadata.generation && e.status == 'True')",
};

const rulesOf = (exprs: HealthCheckExpr[]) => {
  const r = compileHealthChecks(exprs);
  if (!r.ok) throw new Error(r.failure.message);
  return r.value;
};

describe('celHealth', () => {
  const rule = rulesOf([certificateLike]).ruleFor(widget())!;

  it.each<[string, KubeObject, string, string | undefined]>([
    ['Ready=True: current', widget({ conditions: [cond('Ready', 'True')] }), 'Current', undefined],
    ['Ready=False: failed', widget({ conditions: [cond('Ready', 'False')] }), 'Failed', 'HealthCheckExprFailed'],
    [
      'inProgress is evaluated first: Issuing=True and Ready=False is in progress',
      widget({ conditions: [cond('Issuing', 'True'), cond('Ready', 'False')] }),
      'InProgress',
      'HealthCheckExprInProgress',
    ],
    [
      'observedGeneration behind: in progress, nothing evaluated',
      widget({ observedGeneration: 1, conditions: [cond('Ready', 'False')] }),
      'InProgress',
      'LatestGenerationNotObserved',
    ],
    [
      'an expression on a field the object does not have yet: unknown, naming it',
      widget(),
      'Unknown',
      'HealthCheckExprError',
    ],
  ])('%s', (_name, obj, status, reason) => {
    const health = celHealth(rule, obj);
    expect(health.status).toBe(status);
    expect(health.reason).toBe(reason);
  });

  it('none true: in progress', () => {
    const only = rulesOf([{ apiVersion: 'example.com/v1', kind: 'Widget', current: 'status.phase == "Done"' }]);
    const health = celHealth(only.ruleFor(widget())!, widget({ phase: 'Working' }));
    expect(health).toEqual({
      status: 'InProgress',
      reason: 'HealthCheckExprInProgress',
      message: 'healthCheckExprs Widget.example.com: no expression is true yet',
    });
  });

  it.each<[string, string, Record<string, unknown>, string]>([
    ['whole numbers are ints', 'status.replicas == 3 && status.replicas > 2', { replicas: 3 }, 'Current'],
    ['other numbers are doubles', 'status.ratio > 0.5', { ratio: 0.75 }, 'Current'],
    ['has() on a missing field', 'has(status.ready) && status.ready', {}, 'InProgress'],
    ['a result that is not a bool', 'status.phase', { phase: 'Done' }, 'Unknown'],
    ['an unknown function', 'nope(status)', {}, 'Unknown'],
    [
      'all() of an empty list is true (CEL, as in Flux)',
      "status.conditions.filter(e, e.type == 'X').all(e, false)",
      { conditions: [] },
      'Current',
    ],
  ])('%s', (_name, current, status, expected) => {
    const rules = rulesOf([{ apiVersion: 'example.com/v1', kind: 'Widget', current }]);
    const health = celHealth(rules.ruleFor(widget())!, widget(status));
    expect(health.status).toBe(expected);
    if (expected === 'Unknown') expect(health.message).toContain(JSON.stringify(current));
  });
});

describe('compileHealthChecks', () => {
  it('matches by group and kind, whatever the version', () => {
    const rules = rulesOf([certificateLike]);
    expect(rules.ruleFor({ ...widget(), apiVersion: 'example.com/v2' })).toBeDefined();
    expect(rules.ruleFor({ ...widget(), apiVersion: 'other.com/v1' })).toBeUndefined();
    expect(rules.ruleFor({ ...widget(), kind: 'Gadget' })).toBeUndefined();
  });

  it.each<[string, HealthCheckExpr[], RegExp]>([
    [
      'a syntax error, naming the entry, kind, expression and where',
      [{ ...certificateLike, failed: "status.conditions.exists(e, e.type == 'Ready'" }],
      /^spec\.healthCheckExprs\[0\] \(Widget\.example\.com\) failed: "status\.conditions\.exists\(e, e\.type == 'Ready'" is not valid CEL: at 1:\d+: .*; fix the expression$/,
    ],
    [
      'an empty current',
      [{ apiVersion: 'example.com/v1', kind: 'Widget', current: ' ' }],
      /^spec\.healthCheckExprs\[0\] \(Widget\.example\.com\): current is required$/,
    ],
    [
      'two entries for one kind',
      [certificateLike, { ...certificateLike, apiVersion: 'example.com/v2' }],
      /^spec\.healthCheckExprs\[1\]: a second entry for Widget\.example\.com; keep one entry per kind$/,
    ],
  ])('refuses %s as InvalidSpec', (_name, exprs, message) => {
    const r = compileHealthChecks(exprs);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure).toMatchObject({ reason: 'InvalidSpec', terminal: true });
    expect(r.failure.message).toMatch(message);
  });
});
