import { describe, expect, it } from 'vitest';
import { refKey } from '../object.ts';
import { withSourceFile } from './locate.ts';

const object = { group: 'apps', kind: 'Deployment', namespace: 'a', name: 'prod-web' };
const sources = new Map([[refKey(object), 'base/deployment.yaml']]);
const failure = { reason: 'ApplyFailed', message: 'Deployment a/prod-web: invalid', terminal: false };

describe('withSourceFile', () => {
  it('names the file that produced the object', () => {
    expect(withSourceFile({ ...failure, object }, sources).message).toBe(
      'Deployment a/prod-web: invalid (from base/deployment.yaml)',
    );
  });

  it('names the file and line of an object from a plain file', () => {
    const plain = new Map([[refKey(object), 'apps/web.yaml:12']]);
    expect(withSourceFile({ ...failure, object }, plain).message).toBe(
      'Deployment a/prod-web: invalid (from apps/web.yaml:12)',
    );
  });

  it.each([
    ['no object', failure],
    ['an object not in the package', { ...failure, object: { ...object, name: 'other' } }],
    ['a message that names the file already', { ...failure, object, message: 'base/deployment.yaml: bad' }],
  ])('leaves a failure about %s as it is', (_name, f) => {
    expect(withSourceFile(f, sources)).toEqual(f);
  });
});
