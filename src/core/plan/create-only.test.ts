import { describe, expect, it } from 'vitest';
import { refKey, refOf, type KubeObject } from '../object.ts';
import { decideRefusedCreate, mayCreateUnread } from './create-only.ts';
import { DigestAnnotation, withDigest } from './drift.ts';
import { IgnoreFieldsAnnotation, type IgnoreRule } from './ignore.ts';
import { ownerLabels } from './ownership.ts';
import { planChanges } from './plan-changes.ts';

const owner = { name: 'web', namespace: 'team-a' };
const cm = (
  annotations?: Record<string, string>,
  labels?: Record<string, string>,
  data: Record<string, string> = { a: '1' },
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'settings',
    namespace: 'team-a',
    ...(annotations ? { annotations } : {}),
    ...(labels ? { labels } : {}),
  },
  data,
});

describe('mayCreateUnread: a new object whose plan does not depend on its live copy', () => {
  const cases: { name: string; obj: KubeObject; rules?: IgnoreRule[]; want: boolean }[] = [
    { name: 'no policy', obj: cm(), want: true },
    { name: 'apply Merge', obj: cm({ 'packagesync.io/apply': 'Merge' }), want: true },
    {
      name: "Flux's ssa Override reads as Merge",
      obj: cm({ 'kustomize.toolkit.fluxcd.io/ssa': 'Override' }),
      want: true,
    },
    { name: 'recreate (decided again once read)', obj: cm({ 'packagesync.io/recreate': 'enabled' }), want: true },
    { name: 'IfNotPresent', obj: cm({ 'packagesync.io/apply': 'IfNotPresent' }), want: false },
    { name: 'Ignore', obj: cm({ 'packagesync.io/apply': 'Ignore' }), want: false },
    {
      name: "Flux's reconcile disabled",
      obj: cm({ 'kustomize.toolkit.fluxcd.io/reconcile': 'disabled' }),
      want: false,
    },
    { name: 'an unreadable policy', obj: cm({ 'packagesync.io/apply': 'sometimes' }), want: false },
    { name: 'ignore-fields on the package copy', obj: cm({ [IgnoreFieldsAnnotation]: '/data/a' }), want: false },
    {
      name: 'a spec.ignore rule names it',
      obj: cm(),
      rules: [{ paths: ['/data'], target: { kind: 'ConfigMap' } }],
      want: false,
    },
    {
      name: 'a spec.ignore rule names another',
      obj: cm(),
      rules: [{ paths: ['/data'], target: { name: 'other' } }],
      want: true,
    },
  ];
  it.each(cases)('$name → $want', ({ obj, rules, want }) => {
    expect(mayCreateUnread(obj, rules)).toBe(want);
  });
});

describe('decideRefusedCreate decides as planChanges does with the live copy', () => {
  const desired = cm(undefined, undefined, { a: '1' });
  const sent = withDigest(desired);
  const other = ownerLabels({ name: 'api', namespace: 'team-b' });
  const cases: { name: string; live: KubeObject; want: string }[] = [
    { name: 'unowned: adopted', live: cm(undefined, { app: 'x' }, { a: 'theirs' }), want: 'apply adopt' },
    { name: 'another PackageSync: conflict', live: cm(undefined, other), want: 'OwnershipConflict' },
    {
      name: 'half an owner mark: conflict',
      live: cm(undefined, { 'packagesync.io/namespace': 'team-b' }),
      want: 'OwnershipConflict',
    },
    {
      name: 'unowned, live says Ignore: left alone',
      live: cm({ 'packagesync.io/apply': 'Ignore' }),
      want: 'leave ignored',
    },
    {
      name: "another's, live says Ignore: left alone, no conflict",
      live: cm({ 'packagesync.io/apply': 'Ignore' }, other),
      want: 'leave ignored',
    },
    {
      name: 'ours (an inventory lost), as the package has it: nothing to send',
      live: { ...sent, metadata: { ...sent.metadata, labels: ownerLabels(owner) } },
      want: 'leave',
    },
    {
      name: 'ours, differing: applied, not adopted',
      live: cm(undefined, ownerLabels(owner), { a: '0' }),
      want: 'apply',
    },
    {
      name: 'unowned, live opts in to recreate',
      live: cm({ 'packagesync.io/recreate': 'enabled' }),
      want: 'apply adopt recreate',
    },
  ];
  it.each(cases)('$name', ({ live, want }) => {
    const decided = decideRefusedCreate(sent, live, owner);
    const got = !decided.ok
      ? decided.failure.reason
      : decided.value.action === 'leave'
        ? `leave${decided.value.ignored ? ' ignored' : ''}`
        : `apply${decided.value.adopt ? ' adopt' : ''}${decided.value.recreate ? ' recreate' : ''}`;
    expect(got).toBe(want);
    if (!decided.ok) {
      expect(decided.failure.terminal).toBe(true);
      expect(decided.failure.message).toMatch(/settings.*belongs to PackageSync team-b\//);
    }

    // the plan, given the same live copy up front, decides the same
    const key = refKey(refOf(desired));
    const fromPlan = planChanges([desired], [], new Map([[key, live]]), owner);
    const expected = !fromPlan.ok
      ? fromPlan.failure.reason
      : fromPlan.value.ignored.has(key)
        ? 'leave ignored'
        : !fromPlan.value.toApply.has(key)
          ? 'leave'
          : `apply${fromPlan.value.adopt.has(key) ? ' adopt' : ''}${fromPlan.value.recreate.has(key) ? ' recreate' : ''}`;
    expect(got).toBe(expected);
  });

  it("fields the live copy's ignore-fields annotation names go as the live copy has them; the digest stays ours", () => {
    const live = cm({ [IgnoreFieldsAnnotation]: '/data/a' }, undefined, { a: 'kept' });
    const decided = decideRefusedCreate(sent, live, owner);
    expect(decided.ok && decided.value.action === 'apply' && decided.value.object.data).toEqual({ a: 'kept' });
    expect(
      decided.ok && decided.value.action === 'apply' && decided.value.object.metadata.annotations?.[DigestAnnotation],
    ).toBe(sent.metadata.annotations?.[DigestAnnotation]);
  });
});
