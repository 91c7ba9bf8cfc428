import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../core/object.ts';
import { managersOf } from './field-managers.ts';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'a',
    managedFields: [
      {
        manager: 'packagesync',
        operation: 'Apply',
        fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:template': { 'f:spec': { 'f:containers': {} } } } },
      },
      { manager: 'kubectl-edit', operation: 'Update', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
      {
        manager: 'kubectl-set',
        operation: 'Update',
        fieldsV1: {
          'f:spec': {
            'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { 'f:image': {} } } } },
          },
        },
      },
      { manager: 'kube-controller-manager', operation: 'Update', fieldsV1: { 'f:status': { 'f:replicas': {} } } },
    ],
  },
  spec: {
    replicas: 3,
    template: {
      spec: {
        containers: [
          { name: 'sidecar', image: 's:1' },
          { name: 'app', image: 'web:2' },
        ],
      },
    },
  },
} as unknown as KubeObject;

describe('who holds a drifted field now (managedFields)', () => {
  it('names the managers of a map field, never PackageSync itself', () => {
    expect(managersOf(deployment, '/spec/replicas')).toEqual(['kubectl-edit']);
  });

  it('finds an element of an associative list by its key fields, not its index', () => {
    expect(managersOf(deployment, '/spec/template/spec/containers/1/image')).toEqual(['kubectl-set']);
    expect(managersOf(deployment, '/spec/template/spec/containers/0/image')).toEqual([]);
  });

  it('names nobody for a field no one else holds', () => {
    expect(managersOf(deployment, '/metadata/labels/app')).toEqual([]);
  });
});
