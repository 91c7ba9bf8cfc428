/**
 * API errors → Failures: real error bodies captured from kube-apiserver v1.36 (conflict, immutable
 * fields of several kinds, forbidden), turned into messages that name the object, the field, the other
 * manager or the missing permission — and never a Secret's data.
 */
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../src/adapters/kube/client.ts';
import { applyFailure, deleteProblem } from '../../src/adapters/kube/failures.ts';
import type { KubeObject } from '../../src/core/object.ts';

const obj = (apiVersion: string, kind: string, name: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace: 'team-a' },
});
const invalid = (message: string, causes: { reason: string; message: string; field: string }[]) =>
  new KubeApiError(422, 'Invalid', message, { causes });

describe('applyFailure', () => {
  it('a field conflict names every other manager and its fields', () => {
    const e = new KubeApiError(
      409,
      'Conflict',
      'Apply failed with 3 conflicts: conflicts with "kubectl-edit" using v1: …',
      {
        causes: [
          { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-edit" using v1', field: '.data.key' },
          { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-edit" using v1', field: '.data.b' },
          { reason: 'FieldManagerConflict', message: 'conflict with "hpa" using apps/v1', field: '.spec.replicas' },
        ],
      },
    );
    const f = applyFailure(obj('v1', 'ConfigMap', 'cm'), e);
    expect(f.reason).toBe('ApplyConflict');
    expect(f.message).toContain('ConfigMap/team-a/cm: field conflict with other field managers:');
    expect(f.message).toContain('"kubectl-edit" (.data.key, .data.b), "hpa" (.spec.replicas)');
    expect(f.message).toContain('spec.force: true');
  });

  it.each([
    [
      'Deployment selector',
      obj('apps/v1', 'Deployment', 'web'),
      invalid(
        'Deployment.apps "web" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"b"}}: field is immutable',
        [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: {"matchLabels":{"app":"b"}}: field is immutable',
            field: 'spec.selector',
          },
        ],
      ),
      'Deployment/team-a/web: spec.selector cannot be changed (immutable)',
    ],
    [
      'Service clusterIP',
      obj('v1', 'Service', 's'),
      invalid('Service "s" is invalid: spec.clusterIPs[0]: Invalid value: ["10.96.100.11"]: may not change once set', [
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: ["10.96.100.11"]: may not change once set',
          field: 'spec.clusterIPs[0]',
        },
      ]),
      'Service/team-a/s: spec.clusterIPs[0] cannot be changed (may not change once set)',
    ],
    [
      'StatefulSet spec',
      obj('apps/v1', 'StatefulSet', 'st'),
      invalid(
        'StatefulSet.apps "st" is invalid: spec: Forbidden: updates to statefulset spec for fields other than \'replicas\' … are forbidden',
        [
          {
            reason: 'FieldValueForbidden',
            message: "Forbidden: updates to statefulset spec for fields other than 'replicas' … are forbidden",
            field: 'spec',
          },
        ],
      ),
      'StatefulSet/team-a/st: spec cannot be changed',
    ],
    [
      'RoleBinding roleRef',
      obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rb'),
      invalid('RoleBinding… roleRef: Invalid value: {…}: cannot change roleRef', [
        { reason: 'FieldValueInvalid', message: 'Invalid value: {…}: cannot change roleRef', field: 'roleRef' },
      ]),
      'RoleBinding/team-a/rb: roleRef cannot be changed',
    ],
  ])('%s → ImmutableFieldChange naming the object and field', (_name, o, e, expected) => {
    const f = applyFailure(o, e);
    expect(f.reason).toBe('ImmutableFieldChange');
    expect(f.message).toContain(expected);
    expect(f.message).not.toContain('Invalid value');
  });

  it('a Job template change stays short: the server dumps the whole template', () => {
    const dump = `{"labels":{"x":"y"},"Spec":{${'"Containers":[…],'.repeat(200)}}}`;
    const e = invalid(`Job.batch "j" is invalid: spec.template: Invalid value: ${dump}: field is immutable`, [
      { reason: 'FieldValueInvalid', message: `Invalid value: ${dump}: field is immutable`, field: 'spec.template' },
    ]);
    const f = applyFailure(obj('batch/v1', 'Job', 'j'), e);
    expect(f.message).toContain('Job/team-a/j: spec.template cannot be changed');
    expect(f.message.length).toBeLessThan(250);
  });

  it('never quotes a Secret value the API server echoes back', () => {
    const e = invalid('Secret "s" is invalid: type: Invalid value: "SUPERSECRET: with colon": field is immutable', [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "SUPERSECRET: with colon": field is immutable',
        field: 'type',
      },
    ]);
    expect(applyFailure(obj('v1', 'Secret', 's'), e).message).not.toContain('SUPERSECRET');
    const other = invalid('Secret "s" is invalid: data[k]: Invalid value: "SUPERSECRET": a valid config key must …', [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "SUPERSECRET": a valid config key must …',
        field: 'data[k]',
      },
    ]);
    const f = applyFailure(obj('v1', 'Secret', 's'), other);
    expect(f.reason).toBe('ApplyFailed');
    expect(f.message).not.toContain('SUPERSECRET');
    expect(f.message).toContain('data[k]: Invalid value (not shown): a valid config key must');
    const noCauses = new KubeApiError(422, 'Invalid', 'Secret "s" is invalid: data: Invalid value: "SUPERSECRET": bad');
    expect(applyFailure(obj('v1', 'Secret', 's'), noCauses).message).not.toContain('SUPERSECRET');
  });

  it('Forbidden keeps the verb and resource the API server names', () => {
    const e = new KubeApiError(
      403,
      'Forbidden',
      'secrets "s" is forbidden: User "system:serviceaccount:team-a:deployer" cannot patch resource "secrets" in API group "" in the namespace "team-a"',
    );
    const f = applyFailure(obj('v1', 'Secret', 's'), e);
    expect(f.reason).toBe('Forbidden');
    expect(f.message).toContain('cannot patch resource "secrets"');
    expect(f.message).toContain('system:serviceaccount:team-a:deployer');
  });

  it('a delete problem names the object and the refused verb', () => {
    const e = new KubeApiError(
      403,
      'Forbidden',
      'configmaps "c" is forbidden: User "u" cannot delete resource "configmaps"',
    );
    expect(deleteProblem({ group: '', kind: 'ConfigMap', namespace: 'team-a', name: 'c' }, e)).toBe(
      'ConfigMap/team-a/c: configmaps "c" is forbidden: User "u" cannot delete resource "configmaps"',
    );
  });
});
