import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import {
  decideApply,
  deletableByPolicy,
  readObjectPolicy,
  type ApplyDecision,
  type ObjectPolicy,
} from './object-policy.ts';

const obj = (annotations: Record<string, string> = {}, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'x', namespace: 'ns', annotations, labels },
});

const base: ObjectPolicy = { apply: 'Merge', recreate: false, prune: true, deleteWithPackageSync: true };

describe('readObjectPolicy', () => {
  it.each<[string, KubeObject, ObjectPolicy]>([
    ['no annotations', obj(), base],
    ['apply Merge', obj({ 'packagesync.io/apply': 'Merge' }), base],
    ['apply IfNotPresent', obj({ 'packagesync.io/apply': 'IfNotPresent' }), { ...base, apply: 'IfNotPresent' }],
    ['apply Ignore, any case', obj({ 'packagesync.io/apply': 'ignore' }), { ...base, apply: 'Ignore' }],
    ['recreate enabled', obj({ 'packagesync.io/recreate': 'enabled' }), { ...base, recreate: true }],
    ['recreate disabled', obj({ 'packagesync.io/recreate': 'disabled' }), base],
    [
      'prune disabled: kept by prune and teardown',
      obj({ 'packagesync.io/prune': 'disabled' }),
      { ...base, prune: false, deleteWithPackageSync: false },
    ],
    ['Flux ssa Override is our Merge', obj({ 'kustomize.toolkit.fluxcd.io/ssa': 'Override' }), base],
    ['Flux ssa merge (v1beta2 case)', obj({ 'kustomize.toolkit.fluxcd.io/ssa': 'merge' }), base],
    [
      'Flux ssa IfNotPresent',
      obj({ 'kustomize.toolkit.fluxcd.io/ssa': 'IfNotPresent' }),
      { ...base, apply: 'IfNotPresent' },
    ],
    [
      'Flux ssa Ignore as a label',
      obj({}, { 'kustomize.toolkit.fluxcd.io/ssa': 'Ignore' }),
      { ...base, apply: 'Ignore' },
    ],
    [
      'Flux reconcile disabled',
      obj({ 'kustomize.toolkit.fluxcd.io/reconcile': 'disabled' }),
      { ...base, apply: 'Ignore' },
    ],
    ['Flux force enabled', obj({ 'kustomize.toolkit.fluxcd.io/force': 'Enabled' }), { ...base, recreate: true }],
    [
      'Flux prune disabled',
      obj({ 'kustomize.toolkit.fluxcd.io/prune': 'disabled' }),
      { ...base, prune: false, deleteWithPackageSync: false },
    ],
    [
      'ours wins over Flux',
      obj({ 'packagesync.io/apply': 'Merge', 'kustomize.toolkit.fluxcd.io/ssa': 'Ignore' }),
      base,
    ],
    [
      'Argo Prune=false',
      obj({ 'argocd.argoproj.io/sync-options': 'Prune=false' }),
      { ...base, prune: false, deleteWithPackageSync: false },
    ],
    [
      'Argo Prune=confirm keeps it: nobody here confirms',
      obj({ 'argocd.argoproj.io/sync-options': 'Prune=confirm' }),
      { ...base, prune: false, deleteWithPackageSync: false },
    ],
    [
      'Argo Delete=false: pruned, but kept when the PackageSync is deleted',
      obj({ 'argocd.argoproj.io/sync-options': 'Delete=false' }),
      { ...base, deleteWithPackageSync: false },
    ],
    [
      'Argo Force=true,Replace=true → recreate',
      obj({ 'argocd.argoproj.io/sync-options': 'Force=true, Replace=true' }),
      { ...base, recreate: true },
    ],
    [
      'ours wins over Argo Force=true',
      obj({ 'packagesync.io/recreate': 'disabled', 'argocd.argoproj.io/sync-options': 'Force=true,Replace=true' }),
      base,
    ],
    [
      'Argo ServerSideApply=true is what we always do',
      obj({ 'argocd.argoproj.io/sync-options': 'ServerSideApply=true' }),
      base,
    ],
  ])('%s', (_name, o, expected) => {
    expect(readObjectPolicy(o)).toEqual({ ok: true, value: expected });
  });

  it.each<[string, KubeObject, string]>([
    [
      'apply typo',
      obj({ 'packagesync.io/apply': 'Ignored' }),
      'annotation packagesync.io/apply: "Ignored" is not one of Merge, IfNotPresent, Ignore',
    ],
    [
      'Flux ssa typo',
      obj({ 'kustomize.toolkit.fluxcd.io/ssa': 'Skip' }),
      'annotation kustomize.toolkit.fluxcd.io/ssa: "Skip" is not one of Override, Merge, IfNotPresent, Ignore',
    ],
    [
      'recreate typo',
      obj({ 'packagesync.io/recreate': 'yes' }),
      'annotation packagesync.io/recreate: "yes" is not one of enabled, disabled',
    ],
    [
      'prune typo',
      obj({ 'packagesync.io/prune': 'off' }),
      'annotation packagesync.io/prune: "off" is not one of enabled, disabled',
    ],
    ['a long value is cut', obj({ 'packagesync.io/apply': 'x'.repeat(100) }), `"${'x'.repeat(40)}…"`],
  ])('%s → InvalidManifest', (_name, o, message) => {
    const policy = readObjectPolicy(o);
    expect(policy.ok).toBe(false);
    if (policy.ok) return;
    expect(policy.failure.reason).toBe('InvalidManifest');
    expect(policy.failure.message).toContain(message);
  });
});

describe('decideApply', () => {
  const apply: ApplyDecision = { action: 'apply', ignored: false, released: false, recreate: false };
  it.each<[string, KubeObject, KubeObject | undefined, ApplyDecision]>([
    ['plain, missing', obj(), undefined, apply],
    ['plain, there', obj(), obj(), apply],
    [
      'IfNotPresent, missing: created',
      obj({ 'packagesync.io/apply': 'IfNotPresent' }),
      undefined,
      { ...apply, action: 'create' },
    ],
    [
      'IfNotPresent, there: left as it is',
      obj({ 'packagesync.io/apply': 'IfNotPresent' }),
      obj(),
      { ...apply, action: 'leave' },
    ],
    [
      'IfNotPresent only on the live copy: applied (the package decides)',
      obj(),
      obj({ 'packagesync.io/apply': 'IfNotPresent' }),
      apply,
    ],
    [
      'Ignore in the package: left alone and released',
      obj({ 'packagesync.io/apply': 'Ignore' }),
      obj(),
      { ...apply, action: 'leave', ignored: true, released: true },
    ],
    [
      'Ignore in the package, missing: not created',
      obj({ 'packagesync.io/apply': 'Ignore' }),
      undefined,
      { ...apply, action: 'leave', ignored: true, released: true },
    ],
    [
      'Ignore on the live copy (kubectl annotate): left alone, still listed',
      obj(),
      obj({ 'packagesync.io/apply': 'Ignore' }),
      { ...apply, action: 'leave', ignored: true },
    ],
    ['recreate in the package', obj({ 'packagesync.io/recreate': 'enabled' }), obj(), { ...apply, recreate: true }],
    [
      'recreate on the live copy',
      obj(),
      obj({ 'kustomize.toolkit.fluxcd.io/force': 'enabled' }),
      { ...apply, recreate: true },
    ],
    ['an unreadable live value is the default', obj(), obj({ 'packagesync.io/apply': '??' }), apply],
  ])('%s', (_name, desired, live, expected) => {
    expect(decideApply(desired, live)).toEqual({ ok: true, value: expected });
  });

  it('an unreadable package value fails', () => {
    expect(decideApply(obj({ 'packagesync.io/apply': 'Sometimes' }), undefined).ok).toBe(false);
  });
});

describe('deletableByPolicy', () => {
  it.each<[string, KubeObject, boolean, boolean]>([
    ['plain', obj(), true, true],
    ['prune disabled', obj({ 'packagesync.io/prune': 'disabled' }), false, false],
    ['prune Disabled (case)', obj({ 'packagesync.io/prune': 'Disabled' }), false, false],
    ['prune enabled', obj({ 'packagesync.io/prune': 'enabled' }), true, true],
    ['apply Ignore', obj({ 'packagesync.io/apply': 'Ignore' }), false, false],
    ['Flux ssa Ignore', obj({ 'kustomize.toolkit.fluxcd.io/ssa': 'Ignore' }), false, false],
    ['IfNotPresent is pruned (Flux)', obj({ 'packagesync.io/apply': 'IfNotPresent' }), true, true],
    ['Argo Delete=false', obj({ 'argocd.argoproj.io/sync-options': 'Delete=false' }), true, false],
    ['an unreadable value keeps it', obj({ 'packagesync.io/prune': 'maybe' }), false, false],
  ])('%s → prune %s, teardown %s', (_name, live, prune, teardown) => {
    expect(deletableByPolicy(live, 'prune')).toBe(prune);
    expect(deletableByPolicy(live, 'teardown')).toBe(teardown);
  });
});
