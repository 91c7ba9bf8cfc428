import { Reason } from '../../api/reasons.ts';
import { isValidName } from '../../api/names.ts';
import type { Result } from '../failure.ts';
import { fail, ok } from '../failure.ts';
import type { KubeObject } from '../object.ts';
import { isRecord, ownField } from '../object.ts';
import type { SourceLocation } from './types.ts';
import { describeLocation } from './types.ts';

/** An object as written in the package, before namespace defaulting and owner labels. */
export interface LocatedObject {
  object: KubeObject;
  where: SourceLocation;
  /**
   * Fields written twice in a render tool's output (kustomize, helm), the last value kept as `helm install` and
   * Flux keep it (docs/adr/0034): `spec.template.spec.containers[0].args`. Files a person wrote never get here.
   */
  duplicateKeys?: string[];
}

/** kpt marks objects that configure tools, not the cluster, with this annotation. */
export const LocalConfigAnnotation = 'config.kubernetes.io/local-config';

const maxListNesting = 8;

/** A step run on each object before it is checked (postBuild substitution): a name may be `${app}-web`. */
export type ObjectStep = (obj: Record<string, unknown>, where: SourceLocation) => Result<Record<string, unknown>>;

/**
 * The objects a document defines: itself, or the items of a List, minus local configuration (the
 * Kptfile, objects annotated local-config). Each object goes through `step`, then is checked for what
 * apply needs.
 */
export function objectsOfDocument(
  value: unknown,
  where: SourceLocation,
  step?: ObjectStep,
  /** The line each item of a top-level List starts on (a nested List's items keep their outer item's). */
  itemLines: readonly number[] = [],
): Result<LocatedObject[]> {
  if (!isRecord(value)) return invalid(where, 'not a mapping; each document must be one Kubernetes object');
  if (isList(value)) return itemsOf(value, where, step, itemLines);
  if (isLocalConfig(value)) return ok([]);
  const stepped = step ? step(value, where) : ok(value);
  if (!stepped.ok) return stepped;
  const checked = checkObject(stepped.value, where);
  return checked.ok ? ok([{ object: checked.value, where }]) : checked;
}

function itemsOf(
  list: Record<string, unknown>,
  where: SourceLocation,
  step: ObjectStep | undefined,
  itemLines: readonly number[],
): Result<LocatedObject[]> {
  const items = ownField(list, 'items');
  if (!Array.isArray(items)) return invalid(where, `${String(ownField(list, 'kind'))} without an items list`);
  if (where.items.length >= maxListNesting) return invalid(where, 'Lists nested too deeply');
  const found: LocatedObject[] = [];
  for (const [i, item] of items.entries()) {
    const line = where.items.length === 0 ? (itemLines[i] ?? where.line) : where.line;
    const objects = objectsOfDocument(
      item,
      { ...where, items: [...where.items, i + 1], ...(line ? { line } : {}) },
      step,
    );
    if (!objects.ok) return objects;
    found.push(...objects.value);
  }
  return ok(found);
}

/** `kind: List` (v1), and any `*List` kind carrying items, as `kubectl get -o yaml` writes them. */
function isList(value: Record<string, unknown>): boolean {
  const kind = ownField(value, 'kind');
  if (typeof kind !== 'string') return false;
  return kind === 'List' || (kind.endsWith('List') && Array.isArray(ownField(value, 'items')));
}

function isLocalConfig(value: Record<string, unknown>): boolean {
  const apiVersion = ownField(value, 'apiVersion');
  if (ownField(value, 'kind') === 'Kptfile' && typeof apiVersion === 'string' && apiVersion.startsWith('kpt.dev/'))
    return true;
  const metadata = ownField(value, 'metadata');
  const annotations = isRecord(metadata) ? ownField(metadata, 'annotations') : undefined;
  return isRecord(annotations) && ownField(annotations, LocalConfigAnnotation) === 'true';
}

function checkObject(value: Record<string, unknown>, where: SourceLocation): Result<KubeObject> {
  const apiVersion = ownField(value, 'apiVersion');
  const kind = ownField(value, 'kind');
  const metadata = ownField(value, 'metadata');
  if (!nonEmptyString(apiVersion)) return invalid(where, 'no apiVersion; set apiVersion (e.g. apps/v1)');
  if (!nonEmptyString(kind)) return invalid(where, 'no kind; set kind (e.g. Deployment)');
  if (!isRecord(metadata)) return invalid(where, `${kind} has no metadata; set metadata.name`);
  const name = ownField(metadata, 'name');
  if (!nonEmptyString(name)) {
    const hint =
      ownField(metadata, 'generateName') === undefined ? '' : ' (generateName cannot be applied declaratively)';
    return invalid(where, `${kind} has no metadata.name; set metadata.name${hint}`);
  }
  // Names end up as one segment of a URL path: "." and ".." would be dot segments (the URL would name the
  // collection or the namespace instead), "/" would add segments. No Kubernetes object can be named so.
  if (name === '.' || name === '..' || /[/%]/.test(name)) {
    return invalid(
      where,
      `${kind} has metadata.name ${JSON.stringify(name)}: a name may not be "." or "..", nor contain "/" or "%"`,
    );
  }
  const label = `${kind} ${name}`;
  const namespace = ownField(metadata, 'namespace');
  if (namespace !== undefined && namespace !== null && typeof namespace !== 'string') {
    return invalid(where, `${label} has a metadata.namespace that is not a string`);
  }
  if (typeof namespace === 'string' && namespace !== '' && !isValidName('namespace', namespace)) {
    return invalid(
      where,
      `${label} has metadata.namespace ${JSON.stringify(namespace)}: a namespace is a DNS label (lowercase letters, digits, "-")`,
    );
  }
  for (const field of ['labels', 'annotations']) {
    const problem = stringMapProblem(ownField(metadata, field));
    if (problem) return invalid(where, `${label}: metadata.${field} ${problem}`);
  }
  return ok(value as KubeObject);
}

function stringMapProblem(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) return 'must be a mapping of strings';
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') return `has a non-string value for ${JSON.stringify(key)}; quote the value`;
  }
  return undefined;
}

function invalid<T>(where: SourceLocation, problem: string): Result<T> {
  return fail(Reason.InvalidManifest, `${describeLocation(where)}: ${problem}`, { terminal: true });
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
