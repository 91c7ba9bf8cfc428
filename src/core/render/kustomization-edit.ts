import { isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node } from 'yaml';
import type { KustomizeSpec } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import type { Result } from '../failure.ts';
import { fail, ok } from '../failure.ts';
import { describeYamlError } from './yaml-errors.ts';

/**
 * The package's kustomization as the build sees it: spec.kustomize applied the way kustomize-controller
 * applies it (fluxcd/pkg/kustomize generator: the kustomization itself is edited, so namePrefix replaces
 * the file's, an image entry replaces the file's entry of the same name, patches and components are
 * appended), plus `buildMetadata: [originAnnotations]`, so every built object names its source file.
 * Pure: text in, text out; the caller writes it into a scratch copy, never into the checkout.
 *
 * What the file says is kept as written: kustomize reads it with go-yaml v2 rules, where `count: 010` is 8, and a
 * re-emitted value could read otherwise (this edit once wrote `count: 10`, so kustomize built 10 replicas where
 * `kustomize build` built 8). Without spec.kustomize, the one line is appended to the text. Otherwise the file is
 * read with the failsafe schema (every scalar kept as its source text) and each value added is double-quoted: a
 * string, as Flux's generator writes it (a struct marshalled to YAML).
 */
export function editKustomization(text: string, shown: string, spec: KustomizeSpec | undefined): Result<string> {
  if (!changesKustomization(spec) && appendable(text))
    return ok(`${text}${text === '' || text.endsWith('\n') ? '' : '\n'}buildMetadata: [originAnnotations]\n`);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false, lineCounter, schema: 'failsafe' });
  const problem = doc.errors[0];
  if (problem) {
    const pos = lineCounter.linePos(problem.pos[0]);
    const at = ` at line ${pos.line}, column ${pos.col}`;
    return fail(Reason.RenderFailed, `${shown}: ${describeYamlError(problem.code)}${at}; fix the kustomization`, {
      terminal: true,
    });
  }
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === ''))
    doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  if (!isMap(doc.contents)) return fail(Reason.RenderFailed, `${shown} is not a mapping`, { terminal: true });
  const quoted = (value: unknown) => quotedNode(doc, value);

  const metadata = doc.get('buildMetadata');
  if (isSeq(metadata)) {
    if (!metadata.items.some((i) => isScalar(i) && i.value === 'originAnnotations'))
      metadata.add(quoted('originAnnotations'));
  } else doc.set('buildMetadata', quoted(['originAnnotations']));
  if (!spec) return ok(doc.toString());

  if (spec.namePrefix !== undefined && spec.namePrefix !== '') doc.set('namePrefix', quoted(spec.namePrefix));
  if (spec.nameSuffix !== undefined && spec.nameSuffix !== '') doc.set('nameSuffix', quoted(spec.nameSuffix));
  for (const patch of spec.patches ?? []) {
    append(
      doc,
      'patches',
      quoted({ patch: patch.patch, ...(patch.target ? { target: dropEmpty(patch.target) } : {}) }),
    );
  }
  for (const component of spec.components ?? []) {
    if (!isLocalRelative(component)) {
      return fail(
        Reason.RenderRefused,
        `spec.kustomize.components entry ${JSON.stringify(component)} must be a relative path inside the repository`,
        { terminal: true },
      );
    }
    append(doc, 'components', quoted(component));
  }
  if (spec.images && spec.images.length > 0) {
    const existing = doc.get('images');
    const images = isSeq(existing) ? existing : doc.createNode([]);
    for (const image of spec.images) {
      const entry = quoted(dropEmpty(image));
      const at = images.items.findIndex((i) => isMap(i) && i.get('name') === image.name);
      if (at >= 0) images.items[at] = entry;
      else images.items.push(entry);
    }
    if (!isSeq(existing)) doc.set('images', images);
  }
  return ok(doc.toString());
}

/**
 * Whether spec.kustomize changes anything in the file (an empty prefix or suffix does not). Without it the edit only
 * adds buildMetadata, which names no file: the kustomize check may read the file as committed.
 */
export function changesKustomization(spec: KustomizeSpec | undefined): boolean {
  if (!spec) return false;
  return (
    !!spec.namePrefix ||
    !!spec.nameSuffix ||
    (spec.patches?.length ?? 0) > 0 ||
    (spec.components?.length ?? 0) > 0 ||
    (spec.images?.length ?? 0) > 0
  );
}

/**
 * Whether a line `buildMetadata: [originAnnotations]` appended to the text is that key added to its top-level
 * mapping: the file starts (after blank and comment lines) with a plain key at column 0 (a block mapping, not a flow
 * one or an indented one), has no document markers or directives, and does not name buildMetadata anywhere.
 * Anything else takes the parsed path. The kustomize check has read the file as a mapping before this runs.
 */
function appendable(text: string): boolean {
  if (text.includes('buildMetadata') || /^(---|\.\.\.|%)/m.test(text)) return false;
  const first = /^(?![ \t]*(#|$)).*$/m.exec(text)?.[0];
  return first !== undefined && /^[A-Za-z_][\w.-]*[ \t]*:([ \t]|$)/.test(first);
}

/** A value added to the file, each of its scalars double-quoted: read as the string it is, whatever it spells. */
function quotedNode(doc: Document, value: unknown): Node {
  const node = doc.createNode(value);
  visit(node, {
    Scalar: (_, scalar) => {
      scalar.type = 'QUOTE_DOUBLE';
    },
  });
  return node;
}

function append(doc: Document, field: string, node: Node): void {
  const seq = doc.get(field);
  if (isSeq(seq)) seq.add(node);
  else doc.set(field, doc.createNode([node]));
}

function dropEmpty<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== '')) as T;
}

/** Flux's IsLocalRelativePath: no URL, not absolute. Escapes through .. are caught by the tree check. */
function isLocalRelative(path: string): boolean {
  return !path.startsWith('/') && !/^[a-z][a-z0-9+.-]*:\/\//i.test(path);
}
