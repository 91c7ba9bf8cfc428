import { Reason } from '../../api/reasons.ts';
import type { Result } from '../failure.ts';
import { fail, ok } from '../failure.ts';
import type { KubeObject } from '../object.ts';
import { describeRef, groupOf, refKey, refOf } from '../object.ts';
import { canonicalJson, compareUtf8, sha256Hex } from './canonical.ts';
import type { LocatedObject } from './manifests.ts';
import { objectsOfDocument } from './manifests.ts';
import { normalizeObject } from './normalize.ts';
import { checkParseBudget, parseManifestFile } from './parse.ts';
import { scopeResolver } from './scope.ts';
import { substitutionStep } from './substitute.ts';
import type { DuplicateKeyNote, RenderedPackage, RenderOptions, SourceFile, Substitution } from './types.ts';
import { describeLocation } from './types.ts';

/**
 * Package files → the objects to apply. Pure and deterministic: the same files in any order give the
 * same objects and digest. Any problem in any file fails the whole render, so nothing is applied or
 * pruned from a half-read package.
 */
export function renderPackage(files: readonly SourceFile[], options: RenderOptions): Result<RenderedPackage> {
  const read = readObjects(files, options.substitution);
  if (!read.ok) return read;
  return renderObjects(read.value, options, plainPackage(files.length));
}

/** How a plain package is named in an empty-render message. */
export const plainPackage = (files: number): string => `the package (${files} manifest file${files === 1 ? '' : 's'})`;

/**
 * Objects as read or built (plain files, kustomize, helm) → the objects to apply: namespaces, owner
 * labels, duplicates, emptiness. `what` names the package in the empty-render message. Pure steps on the
 * built objects (postBuild substitution, commonMetadata) run before this, on the LocatedObjects.
 */
export function renderObjects(
  located: readonly LocatedObject[],
  options: RenderOptions,
  what: string,
): Result<RenderedPackage> {
  const namespaced = scopeResolver(
    located.map((found) => found.object),
    options.isNamespaced,
  );
  const policy = {
    target: options.targetNamespace || undefined,
    fallback: options.defaultNamespace || options.owner.namespace,
  };
  const rendered = located.map(({ object, where, duplicateKeys }) => ({
    object: normalizeObject(object, namespaced(groupOf(object.apiVersion), object.kind), policy, options.owner),
    where,
    duplicateKeys,
  }));

  const sources = new Map<string, string>();
  const firstDefinition = new Map<string, LocatedObject>();
  for (const found of rendered) {
    const ref = refOf(found.object);
    const key = refKey(ref);
    const earlier = firstDefinition.get(key);
    if (earlier) {
      return fail(
        Reason.DuplicateObject,
        `${describeRef(ref)} is defined twice, in ${describeLocation(earlier.where)} and ${describeLocation(found.where)}; ` +
          'keep one definition',
        { object: ref, terminal: true },
      );
    }
    firstDefinition.set(key, found);
    sources.set(key, found.where.line === undefined ? found.where.path : describeLocation(found.where));
  }

  if (rendered.length === 0 && !options.allowEmpty) {
    return fail(Reason.EmptyRender, `${what} renders no objects; ` + 'commit manifests or set spec.allowEmpty: true', {
      terminal: true,
    });
  }

  const objects = rendered.map((found) => found.object);
  const duplicateKeys: DuplicateKeyNote[] = rendered.flatMap(({ object, where, duplicateKeys: fields }) =>
    (fields ?? []).map((field) => ({ ref: refOf(object), field, source: where.path })),
  );
  return ok({
    objects,
    digest: packageDigest(objects),
    sources,
    ...(duplicateKeys.length > 0 ? { duplicateKeys } : {}),
  });
}

export function readObjects(files: readonly SourceFile[], substitution?: Substitution): Result<LocatedObject[]> {
  const found: LocatedObject[] = [];
  const step = substitutionStep(substitution);
  const sorted = [...files].sort((a, b) => compareUtf8(a.path, b.path));
  // the whole package's documents and bytes, before any parse
  const budget = checkParseBudget(sorted);
  if (!budget.ok) return budget;
  for (const file of sorted) {
    const documents = parseManifestFile(file);
    if (!documents.ok) return documents;
    for (const document of documents.value) {
      const where = { path: file.path, document: document.index, items: [], line: document.line };
      const objects = objectsOfDocument(document.value, where, step, document.itemLines);
      if (!objects.ok) return objects;
      found.push(...objects.value);
    }
  }
  return ok(found);
}

/**
 * What a Warning event and the plan say about fields a render tool repeated: the object, the field, the file,
 * and that the last value is the one applied. At most 10 named, then a count.
 */
export function duplicateKeysMessage(notes: readonly DuplicateKeyNote[]): string {
  const named = notes
    .slice(0, 10)
    .map((n) => `${describeRef(n.ref)} field ${n.field} (${n.source})`)
    .join('; ');
  const more = notes.length > 10 ? `; and ${notes.length - 10} more` : '';
  return (
    `the render tool's output repeats a key: ${named}${more}. The last value is applied, as helm install and ` +
    'Flux apply it; remove the repeat from the template or patch (docs/reasons.md#duplicatekeys)'
  );
}

/** Sorted by identity first, so moving an object to another file does not change the digest. */
function packageDigest(objects: readonly KubeObject[]): string {
  const keyed = objects.map((obj) => ({ key: refKey(refOf(obj)), obj }));
  keyed.sort((a, b) => compareUtf8(a.key, b.key));
  return sha256Hex(canonicalJson(keyed.map(({ obj }) => obj)));
}
