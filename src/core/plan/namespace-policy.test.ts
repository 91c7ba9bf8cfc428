import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { checkNamespacePolicy } from './namespace-policy.ts';

const cm = (ns?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', ...(ns ? { namespace: ns } : {}) },
});
const nsObj: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } };
const policy = { controllerNamespace: 'packagesync-system', allowCrossNamespace: false };

describe('checkNamespacePolicy', () => {
  it('allows objects in the PackageSync namespace', () => {
    expect(checkNamespacePolicy([cm('team-a')], 'team-a', policy).ok).toBe(true);
  });
  it('refuses another namespace, naming the object and the way out', () => {
    const r = checkNamespacePolicy([cm('team-a'), cm('team-b')], 'team-a', policy);
    const f = r.ok ? undefined : r.failure;
    expect(f?.reason).toBe('NamespaceNotAllowed');
    expect(f?.message).toContain('ConfigMap/team-b/c is in namespace team-b');
    expect(f?.message).toContain('--allow-cross-namespace-objects');
    expect(f?.terminal).toBe(true);
  });
  it('refuses cluster-scoped objects', () => {
    const r = checkNamespacePolicy([nsObj], 'team-a', policy);
    expect(!r.ok && r.failure.message).toContain('Namespace/other is in cluster scope');
  });
  it('lets the controller namespace and the flag through', () => {
    expect(checkNamespacePolicy([nsObj, cm('x')], 'packagesync-system', policy).ok).toBe(true);
    expect(checkNamespacePolicy([nsObj, cm('x')], 'team-a', { ...policy, allowCrossNamespace: true }).ok).toBe(true);
  });
});
