import type { Failure } from '../failure.ts';
import { refKey } from '../object.ts';

/**
 * A later step's failure about one object of the package, with where it is defined: `file:line` for a plain
 * file, the repository file that produced it for a built package (kustomize, helm), whose name alone may be
 * generated (a prefix, a hash suffix, a release name) and found in no file. Failures about no object, an
 * object not in the package, or that already name the place, are unchanged.
 */
export function withSourceFile(failure: Failure, sources: ReadonlyMap<string, string>): Failure {
  if (!failure.object) return failure;
  const file = sources.get(refKey(failure.object));
  if (file === undefined || failure.message.includes(file)) return failure;
  return { ...failure, message: `${failure.message} (from ${file})` };
}
