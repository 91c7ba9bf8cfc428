import { describe, expect, it } from 'vitest';
import { classifyDryRunError, type DryRunError } from './dry-run-outcome.ts';

const err = (status: number, reason: string, message = 'm', causes: DryRunError['causes'] = []): DryRunError => ({
  status,
  reason,
  message,
  causes,
});

describe('classifyDryRunError', () => {
  it.each<[string, DryRunError, ReturnType<typeof classifyDryRunError>]>([
    [
      'a field-manager conflict: each manager and field',
      err(409, 'ApplyConflict', 'conflict', [
        { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-edit" using v1', field: '.data.k' },
        { reason: 'FieldManagerConflict', message: 'conflict with "hpa"', field: '.spec.replicas' },
        { reason: 'Other', field: '.x' },
      ]),
      {
        kind: 'conflict',
        message: 'conflict',
        conflicts: [
          { manager: 'kubectl-edit', field: '.data.k' },
          { manager: 'hpa', field: '.spec.replicas' },
        ],
      },
    ],
    [
      'an immutable field, named once',
      err(422, 'ImmutableFieldChange', 'immutable', [
        { field: 'spec.selector', message: 'field is immutable' },
        { field: 'spec.selector', message: 'field is immutable' },
      ]),
      { kind: 'immutable', fields: ['spec.selector'], message: 'immutable' },
    ],
    ['a validation or policy refusal', err(422, 'ApplyFailed', 'denied'), { kind: 'reject', message: 'denied' }],
    ['RBAC', err(403, 'Forbidden', 'forbidden'), { kind: 'reject', message: 'forbidden' }],
    ['a bad request', err(400, 'ApplyFailed', 'bad'), { kind: 'reject', message: 'bad' }],
    [
      'a webhook that cannot be called (failurePolicy Fail)',
      err(500, 'ApplyFailed', 'Internal error occurred: failed calling admission webhook "v.example.com"'),
      { kind: 'reject', message: 'Internal error occurred: failed calling admission webhook "v.example.com"' },
    ],
    ['a server error says nothing about the object', err(503, 'ApplyFailed', 'unavailable'), undefined],
    ['no answer at all', err(0, 'ApplyFailed', 'ECONNRESET'), undefined],
  ])('%s', (_what, e, want) => {
    expect(classifyDryRunError(e)).toEqual(want);
  });
});
