/**
 * Reading a kustomization file as data, remembered by its text: for the kustomize check (adapters/render/
 * kustomize-check.ts) and for the paths a sparse checkout needs (adapters/git/kustomize-refs.ts), which read the
 * same files of a fleet's overlays and its shared base, each once.
 */
import { isScalar, LineCounter, parseDocument, visit, type Document } from 'yaml';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';
import { TextMemo } from '../text-memo.ts';

/**
 * A kustomization (or plugin config) as data, refusing what the check could read differently from kustomize:
 * merge keys (`<<`), anchors and aliases. kustomize's YAML library applies merges; one that this parser did
 * not see would hide entries from every check (issue 34). Refusing them is simpler than matching it.
 */
export function readKustomizationYaml(shown: string, text: string): Result<unknown> {
  const read = kustomizationTexts.get(text);
  if ('value' in read) return ok(read.value);
  return fail(read.reason, `${shown}${read.problem}`, { terminal: true });
}

/** What a kustomization's text reads as (frozen: shared by every reader of the same text), or what is wrong with it. */
export function readKustomizationText(text: string): TextRead {
  return kustomizationTexts.get(text);
}

/** What a kustomization's text reads as, or what is wrong with it (after the name of the file, in a message). */
export type TextRead = { value: unknown } | { reason: Reason; problem: string };

/** A fleet's overlays read the same base kustomization: it is parsed once, not once per overlay. */
const kustomizationTexts = new TextMemo<TextRead>((text) => {
  const lineCounter = new LineCounter();
  let document: Document.Parsed;
  try {
    document = parseDocument(text, { uniqueKeys: true, prettyErrors: false, merge: false, lineCounter });
  } catch {
    return { reason: Reason.RenderFailed, problem: ' is not valid YAML; fix the kustomization' };
  }
  const problem = document.errors[0];
  if (problem) {
    const pos = lineCounter.linePos(problem.pos[0]);
    const at = ` at line ${pos.line}, column ${pos.col}`;
    return { reason: Reason.RenderFailed, problem: ` is not valid YAML${at}; fix the kustomization` };
  }
  let found: string | undefined;
  visit(document, {
    Alias: () => {
      found = 'an alias (*name)';
      return visit.BREAK;
    },
    Node: (_, node) => {
      if (!node.anchor) return undefined;
      found = `an anchor (&${node.anchor})`;
      return visit.BREAK;
    },
    Pair: (_, pair) => {
      if (!isScalar(pair.key) || pair.key.value !== '<<') return undefined;
      found = 'a merge key (<<)';
      return visit.BREAK;
    },
  });
  if (found)
    return {
      reason: Reason.RenderRefused,
      problem: ` uses ${found}; merge keys, anchors and aliases are refused in kustomization files, write the entries out`,
    };
  return { value: document.toJS({ maxAliasCount: 0 }) as unknown };
});
