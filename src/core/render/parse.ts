import { Composer, isMap, isNode, isScalar, isSeq, LineCounter, Parser } from 'yaml';
import type { Document } from 'yaml';
import type { ParseOptions, DocumentOptions, SchemaOptions, YAMLError } from 'yaml';
import { Reason } from '../../api/reasons.ts';
import type { Result } from '../failure.ts';
import { fail, ok } from '../failure.ts';
import type { SourceFile } from './types.ts';
import { decodeGoYaml } from './goyaml-decode.ts';
import { describeYamlError } from './yaml-errors.ts';

/** One non-empty document of a file, as plain JSON data. */
export interface ParsedDocument {
  /** 1-based position among the file's documents, empty ones included: what the user counts. */
  index: number;
  value: unknown;
  /** 1-based line the document's content starts on (past leading comments and `---`). */
  line: number;
  /** For a mapping with an `items` list (a List): the line each item starts on, in order. */
  itemLines: number[];
  /** Keys written twice (kept only with `duplicateKeys: 'lastWins'`; the later value is in `value`). */
  duplicateKeys: { path: string; key: string; line: number }[];
}

/** Alias uses allowed per document: real manifests use a handful; billion-laughs needs thousands. */
export const maxAliasCount = 100;
/** Deeper than any real manifest (CRD schemas reach ~40); keeps every recursive walk far from the stack limit. */
export const maxDepth = 256;

/**
 * YAML documents one package may hold, counted before parsing (issue 34: three files of 10⁶ empty documents,
 * each under the per-file byte limit, took the parser to 2.3 GB). Ten times a very large real package.
 */
export const maxPackageDocuments = 50_000;
/** YAML bytes one package may hold (all its files, or one tool's output), checked before parsing. */
export const maxPackageBytes = 64 << 20;

/**
 * The package's documents and bytes, counted cheaply before any parse: over a limit, the file where the
 * count crosses it is named. Parsing then streams document by document (parseManifestFile), so memory
 * follows the objects kept, not the documents read.
 */
export function checkParseBudget(files: readonly SourceFile[]): Result<void> {
  let documents = 0;
  let bytes = 0;
  for (const file of files) {
    bytes += file.content.length;
    if (bytes > maxPackageBytes)
      return renderFailed(
        `${file.path}: the package holds more than ${maxPackageBytes} bytes of YAML (counted before parsing); split it into several packages`,
      );
    documents += countDocuments(file.content);
    if (documents > maxPackageDocuments)
      return renderFailed(
        `${file.path}: the package holds more than ${maxPackageDocuments} YAML documents (counted before parsing); split it into several packages`,
      );
  }
  return ok(undefined);
}

/** Documents a YAML text may hold at most: one, plus one per `---` or `...` marker at a line start. */
export function countDocuments(text: string): number {
  let count = 1;
  for (let at = 0; at < text.length;) {
    if ((text.startsWith('---', at) || text.startsWith('...', at)) && /^[\s#]?$/.test(text.charAt(at + 3))) count++;
    const next = text.indexOf('\n', at);
    if (next < 0) break;
    at = next + 1;
  }
  return count;
}

/** How the yaml library is told to parse a manifest: syntax and positions only; goyaml-decode.ts decides values. */
export const goYamlParseOptions: ParseOptions & DocumentOptions & SchemaOptions = {
  // duplicates are found while decoding (goyaml-decode.ts), where tool output may keep the last one
  uniqueKeys: false,
  // values are decided by goyaml-decode.ts: the library only parses, so its schema resolves nothing
  schema: 'failsafe',
  resolveKnownTags: false,
  merge: false,
  strict: true,
  // Positions are computed from a LineCounter: pretty errors would quote the source line.
  prettyErrors: false,
  logLevel: 'error',
};

export interface ParseManifestOptions {
  /**
   * `refuse` (files a person wrote): a repeated key fails the file with its line. `lastWins` (what kustomize or
   * Helm printed): the later value counts, as `helm install` and Flux read it, and the repeat is reported.
   */
  duplicateKeys?: 'refuse' | 'lastWins';
}

/**
 * Parses a multi-document YAML (or JSON) file as kubectl reads it (go-yaml v2 rules, goyaml-decode.ts),
 * safely: unknown tags, alias bombs and values JSON cannot carry fail the whole file, and so do repeated
 * keys unless told otherwise. Messages give `file:line:column` (or the document's first line) and the
 * document, never the text.
 */
export function parseManifestFile(file: SourceFile, opts: ParseManifestOptions = {}): Result<ParsedDocument[]> {
  const budget = checkParseBudget([file]);
  if (!budget.ok) return budget;
  const lineCounter = new LineCounter();
  const parsed: ParsedDocument[] = [];
  // one document at a time: an empty or refused document is dropped before the next is read
  const composer = new Composer(goYamlParseOptions);
  const stream = composer.compose(new Parser(lineCounter.addNewLine).parse(file.content));
  let i = -1;
  while (true) {
    let next: IteratorResult<Document.Parsed>;
    try {
      next = stream.next();
    } catch (error) {
      return renderFailed(`${file.path}: ${thrownProblem(error)}; fix the YAML`);
    }
    if (next.done) break;
    const document = next.value;
    i++;
    const docLine = lines(document, lineCounter).line;
    const where = `${file.path}:${docLine} (document ${i + 1})`;
    const index = i + 1;
    const at = (offset: number) => {
      const { line, col } = lineCounter.linePos(offset);
      return `${file.path}:${line}:${col} (document ${index})`;
    };
    // tags are judged by the decoder (the failsafe schema knows none of them)
    const problem = firstByPosition([...document.errors, ...document.warnings.filter(knownToDecoder)]);
    if (problem) return renderFailed(`${at(problem.pos[0])}: ${describeYamlError(problem.code)}; fix the YAML`);
    const decoded = decodeGoYaml(document);
    if (!decoded.ok) {
      const { message, offset } = decoded.problem;
      return renderFailed(`${offset === undefined ? where : at(offset)}: ${message}; fix the YAML`);
    }
    const { value, duplicates } = decoded.value;
    const first = duplicates[0];
    if (first && opts.duplicateKeys !== 'lastWins') {
      return renderFailed(`${at(first.offset)}: ${describeDuplicate(first)}; remove one of them`);
    }
    const notJson = findNonJson(value, '', 0);
    if (notJson) return renderFailed(`${where}: ${notJson}`);
    const duplicateKeys = duplicates.map(({ path, key, offset }) => ({
      path,
      key,
      line: lineCounter.linePos(offset).line,
    }));
    if (value !== null && value !== undefined) {
      parsed.push({ index, value, ...lines(document, lineCounter), duplicateKeys });
    }
  }
  return ok(parsed);
}

/** `duplicate mapping key "a" (in metadata.labels)`: key names, never values. */
export function describeDuplicate({ path, key }: { path: string; key: string }): string {
  return `duplicate mapping key ${JSON.stringify(key)}${path ? ` (in ${path})` : ''}`;
}

export function knownToDecoder(warning: YAMLError): boolean {
  return warning.code !== 'TAG_RESOLVE_FAILED';
}

/** Where a document's object, and each item of its `items` list, start. */
function lines(document: Document.Parsed, counter: LineCounter): { line: number; itemLines: number[] } {
  const at = (offset: number | undefined) => (offset === undefined ? 1 : counter.linePos(offset).line);
  const contents = document.contents;
  const line = at(contents?.range?.[0]);
  if (!isMap(contents)) return { line, itemLines: [] };
  const items = contents.items.find((pair) => isScalar(pair.key) && pair.key.value === 'items')?.value;
  return {
    line,
    itemLines: isSeq(items) ? items.items.map((item) => (isNode(item) ? at(item.range?.[0]) : line)) : [],
  };
}

function renderFailed<T>(message: string): Result<T> {
  return fail(Reason.RenderFailed, message, { terminal: true });
}

function firstByPosition(problems: YAMLError[]): YAMLError | undefined {
  return problems.reduce<YAMLError | undefined>(
    (first, p) => (!first || p.pos[0] < first.pos[0] ? p : first),
    undefined,
  );
}

function thrownProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (message.startsWith('Excessive alias count')) {
    return `aliases expand to too much data (limit ${maxAliasCount} alias uses)`;
  }
  if (message.startsWith('Unresolved alias')) return 'alias used before its anchor is defined';
  if (error instanceof RangeError) return 'nested too deeply';
  return 'could not be read as data';
}

/** Describes the first value JSON cannot carry exactly (with its field path), or undefined. */
export function findNonJson(value: unknown, path: string, depth: number): string | undefined {
  if (depth > maxDepth) return `nested deeper than ${maxDepth} levels at ${path || 'the top'}`;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return `the value at ${path || 'the top'} is not a finite number (.inf or .nan)`;
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
      return `the value at ${path || 'the top'} is an integer too large to keep exactly; quote it`;
    }
    return undefined;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = findNonJson(item, `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [key, item] of Object.entries(value)) {
      const found = findNonJson(item, path ? `${path}.${key}` : key, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  return `the value at ${path || 'the top'} is not JSON data (a timestamp, binary or set); quote it`;
}
