import type { Failure } from '../failure.ts';
import { refKey } from '../object.ts';

/**
 * A later step's failure about one object of a built package (kustomize, helm), with the repository file
 * that produced the object: the object's name alone may be generated (a prefix, a hash suffix, a
 * release name) and found in no file. Failures about no object, or an object not in the package, are
 * unchanged.
 */
export function withSourceFile(failure: Failure, sources: ReadonlyMap<string, string>): Failure {
  if (!failure.object) return failure;
  const file = sources.get(refKey(failure.object));
  if (file === undefined || failure.message.includes(file)) return failure;
  return { ...failure, message: `${failure.message} (from ${file})` };
}
