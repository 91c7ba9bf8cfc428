import { parse } from 'yaml';
import { Reason } from '../../api/reasons.ts';
import type { Result } from '../failure.ts';
import { fail, ok } from '../failure.ts';
import { isRecord } from '../object.ts';
import type { KubeObject } from '../object.ts';
import { TextMemo } from '../text-memo.ts';
import type { LocatedObject } from './manifests.ts';
import { objectsOfDocument, type ObjectStep } from './manifests.ts';
import {
  checkParseBudget,
  findNonJson,
  maxPackageBytes,
  maxPackageDocuments,
  parseManifestFile,
  type ParsedDocument,
} from './parse.ts';

/**
 * A render tool's stdout → objects, each located in the repository file that produced it. Pure: the
 * subprocess ran before (src/adapters/render). Paths are repo-relative, since a kustomize base may live
 * anywhere in the repository.
 *
 * kustomize: the build ran with `buildMetadata: [originAnnotations]`, so each object carries
 * config.kubernetes.io/origin (path relative to the package, or the kustomization that generated it);
 * it is read and removed here, so what is applied equals plain `kustomize build` output.
 * helm: `helm template` writes `# Source: <chart>/templates/x.yaml` above each document.
 */

export const OriginAnnotation = 'config.kubernetes.io/origin';
export const HelmHookAnnotation = 'helm.sh/hook';

/** `step`: postBuild substitution, run on each object before it is checked (as Flux runs it on this output). */
export function objectsOfKustomizeOutput(
  stdout: string,
  packagePath: string,
  step?: ObjectStep,
): Result<LocatedObject[]> {
  const shown = `kustomize build ${packagePath}`;
  const documents = parseManifestFile({ path: shown, content: stdout }, toolOutput);
  if (!documents.ok) return documents;
  const found: LocatedObject[] = [];
  for (const document of documents.value) {
    const origin = takeOrigin(document.value);
    const path = origin === undefined ? shown : repoJoin(packagePath, origin);
    const objects = objectsOfDocument(document.value, { path, document: 0, items: [] }, step);
    if (!objects.ok) return objects;
    found.push(...withDuplicateKeys(objects.value, document));
  }
  return ok(found);
}

/**
 * The same objects from the render worker's JSON array of kustomize's output documents (hack/render-worker/
 * objects.go): decoded there as kubectl decodes that YAML, and sent as YAML instead whenever this module's reader
 * would have more to say (a tag, an alias, a repeated key, a number JSON cannot carry exactly). Its limits hold
 * here too: documents and bytes, nesting depth.
 */
export function objectsOfKustomizeObjects(
  json: string,
  packagePath: string,
  step?: ObjectStep,
): Result<LocatedObject[]> {
  const shown = `kustomize build ${packagePath}`;
  const documents = documentsOf(json, shown);
  if (!documents.ok) return documents;
  const found: LocatedObject[] = [];
  for (const [i, value] of documents.value.entries()) {
    const notJson = findNonJson(value, '', 0);
    if (notJson) return toolOutputRefused(shown, ` (document ${i + 1}): ${notJson}`);
    const origin = takeOrigin(value);
    const path = origin === undefined ? shown : repoJoin(packagePath, origin);
    const objects = objectsOfDocument(value, { path, document: 0, items: [] }, step);
    if (!objects.ok) return objects;
    found.push(...objects.value);
  }
  return ok(found);
}

/**
 * A key repeated in what kustomize or Helm printed is read as `helm install`, kubectl and Flux read it: the
 * last value wins (docs/adr/0034). A repeat in a file a person wrote still fails (parse.ts).
 */
const toolOutput = { duplicateKeys: 'lastWins' } as const;

/** Each object with the repeated fields found inside it (a List's items by their index). */
function withDuplicateKeys(objects: LocatedObject[], document: ParsedDocument): LocatedObject[] {
  if (document.duplicateKeys.length === 0) return objects;
  return objects.map((found) => {
    const prefix = found.where.items.map((i) => `items[${i - 1}]`).join('.');
    const fields = document.duplicateKeys.flatMap(({ path, key }) => {
      const field = path ? `${path}.${key}` : key;
      if (!prefix) return [field];
      return field.startsWith(`${prefix}.`) ? [field.slice(prefix.length + 1)] : [];
    });
    return fields.length === 0 ? found : { ...found, duplicateKeys: fields };
  });
}

/** The origin's file (or generating kustomization), relative to the package; the annotation is removed. */
function takeOrigin(value: unknown): string | undefined {
  if (!isRecord(value) || !isRecord(value.metadata) || !isRecord(value.metadata.annotations)) return undefined;
  const annotations = value.metadata.annotations;
  const raw = annotations[OriginAnnotation];
  if (raw === undefined) return undefined;
  delete annotations[OriginAnnotation];
  // kustomize writes no annotations map of its own; one that only held the origin goes with it
  if (Object.keys(annotations).length === 0) delete value.metadata.annotations;
  if (typeof raw !== 'string') return undefined;
  return origins.get(raw);
}

/** The objects of one base file carry the same origin in every overlay of a fleet: read once. */
const origins = new TextMemo<string | undefined>((raw) => {
  let origin: unknown;
  try {
    origin = parse(raw);
  } catch {
    return undefined;
  }
  if (!isRecord(origin)) return undefined;
  if (typeof origin.path === 'string' && origin.repo === undefined) return origin.path;
  if (typeof origin.configuredIn === 'string') return origin.configuredIn;
  return undefined;
});

/**
 * `helm template` output → objects located in the chart's templates. Test hooks are dropped (they run
 * only under `helm test`); other hooks stay, as ordinary objects (docs/adr/0012).
 */
export function objectsOfHelmOutput(stdout: string, packagePath: string, step?: ObjectStep): Result<LocatedObject[]> {
  const found: LocatedObject[] = [];
  const budget = checkParseBudget([{ path: `helm template ${packagePath}`, content: stdout }]);
  if (!budget.ok) return budget;
  // helm separates documents with a bare '---' line and writes '# Source:' first in each
  const chunks = stdout.split(/^---[ \t]*$/m);
  for (const chunk of chunks) {
    const source = /^# Source: (.+)$/m.exec(chunk)?.[1]?.trim();
    const path = source === undefined ? `helm template ${packagePath}` : chartFileInRepo(packagePath, source);
    const documents = parseManifestFile({ path, content: chunk }, toolOutput);
    if (!documents.ok) return documents;
    for (const document of documents.value) {
      if (isTestHook(document.value)) continue;
      const objects = objectsOfDocument(document.value, { path, document: 0, items: [] }, step);
      if (!objects.ok) return objects;
      found.push(...withDuplicateKeys(objects.value, document));
    }
  }
  return ok(found);
}

/**
 * The same objects from the render worker's JSON of helm template's documents, `{source, object}` each
 * (hack/render-worker/objects.go: split as objectsOfHelmOutput splits the YAML, decoded as kubectl decodes it; sent
 * as YAML instead whenever this module's reader would have more to say, a repeated key among them).
 */
export function objectsOfHelmObjects(json: string, packagePath: string, step?: ObjectStep): Result<LocatedObject[]> {
  const shown = `helm template ${packagePath}`;
  const documents = documentsOf(json, shown);
  if (!documents.ok) return documents;
  const found: LocatedObject[] = [];
  for (const [i, document] of documents.value.entries()) {
    if (!isRecord(document))
      return toolOutputRefused(shown, ': the render worker sent a document that is not an entry');
    const { source, object } = document;
    if (isTestHook(object)) continue;
    const path = typeof source === 'string' ? chartFileInRepo(packagePath, source) : shown;
    const notJson = findNonJson(object, '', 0);
    if (notJson) return toolOutputRefused(path, ` (document ${i + 1}): ${notJson}`);
    const objects = objectsOfDocument(object, { path, document: 0, items: [] }, step);
    if (!objects.ok) return objects;
    found.push(...objects.value);
  }
  return ok(found);
}

/** The worker's JSON documents, within the limits its YAML would have been read under. */
function documentsOf(json: string, shown: string): Result<unknown[]> {
  if (json.length > maxPackageBytes)
    return toolOutputRefused(
      shown,
      `: the output holds more than ${maxPackageBytes} bytes; split it into several packages`,
    );
  let documents: unknown;
  try {
    documents = JSON.parse(json);
  } catch {
    documents = undefined;
  }
  if (!Array.isArray(documents)) return toolOutputRefused(shown, ': the render worker sent output that is not a list');
  if (documents.length > maxPackageDocuments)
    return toolOutputRefused(
      shown,
      `: the package holds more than ${maxPackageDocuments} documents; split it into several packages`,
    );
  return ok(documents as unknown[]);
}

const toolOutputRefused = <T>(shown: string, problem: string): Result<T> =>
  fail<T>(Reason.RenderFailed, `${shown}${problem}`, { terminal: true });

export function isTestHook(value: unknown): boolean {
  if (!isRecord(value) || !isRecord(value.metadata) || !isRecord(value.metadata.annotations)) return false;
  const hook = value.metadata.annotations[HelmHookAnnotation];
  return typeof hook === 'string' && hook.split(',').some((h) => h.trim().startsWith('test'));
}

/** "mychart/templates/a.yaml" (the chart's name first) → the file in the repository. */
function chartFileInRepo(packagePath: string, source: string): string {
  const slash = source.indexOf('/');
  return repoJoin(packagePath, slash < 0 ? source : source.slice(slash + 1));
}

/** `rel` (relative to the package) as a repo-relative POSIX path. */
export function repoJoin(packagePath: string, rel: string): string {
  const parts: string[] = [];
  for (const part of `${packagePath}/${rel}`.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return parts.length === 0 ? '.' : parts.join('/');
}

/**
 * Flux's spec.kustomize.commonMetadata: labels and annotations set on every object, replacing a value
 * already there (kustomize-controller does this after the build, on each object's own metadata).
 */
export function withCommonMetadata(
  objects: LocatedObject[],
  common: { labels?: Record<string, string>; annotations?: Record<string, string> } | undefined,
): LocatedObject[] {
  if (!common || (!common.labels && !common.annotations)) return objects;
  return objects.map((found) => {
    const { object } = found;
    const metadata = { ...object.metadata };
    if (common.labels) metadata.labels = { ...metadata.labels, ...common.labels };
    if (common.annotations) metadata.annotations = { ...metadata.annotations, ...common.annotations };
    return { ...found, object: { ...object, metadata } as KubeObject };
  });
}
