import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import type { Ownership } from './ownership.ts';
import { mayPrune, ownerLabels, ownershipOf } from './ownership.ts';

const owner = { name: 'web', namespace: 'team-a' };
const live = (labels?: Record<string, string>, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'cfg',
    namespace: 'team-a',
    ...(labels ? { labels } : {}),
    ...(annotations ? { annotations } : {}),
  },
});
const mark = (name: string, namespace: string) => ({
  'packagesync.io/name': name,
  'packagesync.io/namespace': namespace,
});

describe('ownerLabels', () => {
  it('gives both labels', () => {
    expect(ownerLabels(owner)).toEqual(mark('web', 'team-a'));
  });
});

describe('ownershipOf', () => {
  it.each<[string, KubeObject, Ownership]>([
    ['no labels', live(), 'unowned'],
    ['other labels only', live({ app: 'web' }), 'unowned'],
    ['our mark', live({ app: 'web', ...mark('web', 'team-a') }), 'ours'],
    ['same name, other namespace', live(mark('web', 'team-b')), { otherOwner: { name: 'web', namespace: 'team-b' } }],
    ['other name, same namespace', live(mark('api', 'team-a')), { otherOwner: { name: 'api', namespace: 'team-a' } }],
    ['half a mark (name only)', live({ 'packagesync.io/name': 'web' }), { otherOwner: { name: 'web', namespace: '' } }],
    [
      'half a mark (namespace only)',
      live({ 'packagesync.io/namespace': 'team-a' }),
      { otherOwner: { name: '', namespace: 'team-a' } },
    ],
  ])('%s', (_name, obj, expected) => {
    expect(ownershipOf(obj, owner)).toEqual(expected);
  });
});

describe('mayPrune', () => {
  it.each<[string, KubeObject, boolean]>([
    ['ours', live(mark('web', 'team-a')), true],
    ['ours, other annotations', live(mark('web', 'team-a'), { note: 'x' }), true],
    ['ours, prune disabled', live(mark('web', 'team-a'), { 'packagesync.io/prune': 'disabled' }), false],
    [
      'ours, prune annotation with another value',
      live(mark('web', 'team-a'), { 'packagesync.io/prune': 'enabled' }),
      true,
    ],
    ['unowned', live(), false],
    ['another owner', live(mark('api', 'team-a')), false],
    ['half our mark', live({ 'packagesync.io/name': 'web' }), false],
  ])('%s → %s', (_name, obj, expected) => {
    expect(mayPrune(obj, owner)).toBe(expected);
  });
});

describe('mayPrune on teardown', () => {
  it.each<[string, KubeObject, boolean, boolean]>([
    ['ours', live(mark('web', 'team-a')), true, true],
    [
      'Argo CD Delete=false: pruned, kept on teardown',
      live(mark('web', 'team-a'), { 'argocd.argoproj.io/sync-options': 'Delete=false' }),
      true,
      false,
    ],
    [
      'Flux prune disabled',
      live(mark('web', 'team-a'), { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' }),
      false,
      false,
    ],
    ['apply Ignore', live(mark('web', 'team-a'), { 'packagesync.io/apply': 'Ignore' }), false, false],
    ['another owner', live(mark('api', 'team-a')), false, false],
  ])('%s → prune %s, teardown %s', (_name, obj, prune, teardown) => {
    expect(mayPrune(obj, owner, 'prune')).toBe(prune);
    expect(mayPrune(obj, owner, 'teardown')).toBe(teardown);
  });
});
