import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import type { KustomizeSpec } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import type { Result } from '../failure.ts';
import { fail, ok } from '../failure.ts';
import { isRecord } from '../object.ts';
import { describeYamlError } from './yaml-errors.ts';

/**
 * The package's kustomization as the build sees it: spec.kustomize applied the way kustomize-controller
 * applies it (fluxcd/pkg/kustomize generator: the kustomization itself is edited, so namePrefix replaces
 * the file's, an image entry replaces the file's entry of the same name, patches and components are
 * appended), plus `buildMetadata: [originAnnotations]`, so every built object names its source file.
 * Pure: text in, text out; the caller writes it into a scratch copy, never into the checkout.
 */
export function editKustomization(text: string, shown: string, spec: KustomizeSpec | undefined): Result<string> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false, lineCounter });
  const problem = doc.errors[0];
  if (problem) {
    const pos = lineCounter.linePos(problem.pos[0]);
    const at = ` at line ${pos.line}, column ${pos.col}`;
    return fail(Reason.RenderFailed, `${shown}: ${describeYamlError(problem.code)}${at}; fix the kustomization`, {
      terminal: true,
    });
  }
  if (doc.contents === null) doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  if (!isMap(doc.contents)) return fail(Reason.RenderFailed, `${shown} is not a mapping`, { terminal: true });

  const metadata = doc.get('buildMetadata');
  const current = isSeq(metadata) ? (metadata.toJSON() as unknown[]) : [];
  if (!current.includes('originAnnotations')) doc.set('buildMetadata', [...current, 'originAnnotations']);
  if (!spec) return ok(doc.toString());

  if (spec.namePrefix !== undefined && spec.namePrefix !== '') doc.set('namePrefix', spec.namePrefix);
  if (spec.nameSuffix !== undefined && spec.nameSuffix !== '') doc.set('nameSuffix', spec.nameSuffix);
  for (const patch of spec.patches ?? []) {
    append(doc, 'patches', { patch: patch.patch, ...(patch.target ? { target: dropEmpty(patch.target) } : {}) });
  }
  for (const component of spec.components ?? []) {
    if (!isLocalRelative(component)) {
      return fail(
        Reason.RenderRefused,
        `spec.kustomize.components entry ${JSON.stringify(component)} must be a relative path inside the repository`,
        { terminal: true },
      );
    }
    append(doc, 'components', component);
  }
  if (spec.images && spec.images.length > 0) {
    const existing = doc.get('images');
    const images = (isSeq(existing) ? (existing.toJSON() as unknown[]) : []).filter(isRecord);
    for (const image of spec.images) {
      const entry = dropEmpty(image);
      const at = images.findIndex((i) => i.name === image.name);
      if (at >= 0) images[at] = entry;
      else images.push(entry);
    }
    doc.set('images', images);
  }
  return ok(doc.toString());
}

function append(doc: ReturnType<typeof parseDocument>, field: string, value: unknown): void {
  const seq = doc.get(field);
  if (isSeq(seq)) seq.add(doc.createNode(value));
  else doc.set(field, [value]);
}

function dropEmpty<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== '')) as T;
}

/** Flux's IsLocalRelativePath: no URL, not absolute. Escapes through .. are caught by the tree check. */
function isLocalRelative(path: string): boolean {
  return !path.startsWith('/') && !/^[a-z][a-z0-9+.-]*:\/\//i.test(path);
}
