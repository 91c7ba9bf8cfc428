/**
 * RFC 6901 JSON pointers over plain objects (`/spec/replicas`, `/metadata/annotations/a~1b`), as Flux's
 * `spec.ignore[].paths` and Argo CD's `ignoreDifferences[].jsonPointers` name fields. Copy-on-write: the input
 * is never changed.
 */
import { isRecord, ownField } from '../object.ts';

/** The reference tokens of a pointer; undefined for one that is not a pointer (it must start with "/"). */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function formatPointer(tokens: readonly (string | number)[]): string {
  return tokens.map((t) => `/${String(t).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/** The value at `tokens`, or undefined when any step is missing. */
export function valueAt(doc: unknown, tokens: readonly string[]): unknown {
  let at: unknown = doc;
  for (const t of tokens) {
    if (Array.isArray(at)) at = /^(0|[1-9][0-9]*)$/.test(t) ? at[Number(t)] : undefined;
    else if (isRecord(at)) at = ownField(at, t);
    else return undefined;
    if (at === undefined) return undefined;
  }
  return at;
}

/** `doc` with the field at `tokens` removed (unchanged when it is not there). */
export function withoutAt<T>(doc: T, tokens: readonly string[]): T {
  if (tokens.length === 0) return doc;
  const [head, ...rest] = tokens as [string, ...string[]];
  if (Array.isArray(doc)) {
    if (!/^(0|[1-9][0-9]*)$/.test(head) || Number(head) >= doc.length) return doc;
    const i = Number(head);
    if (rest.length === 0) return [...doc.slice(0, i), ...doc.slice(i + 1)] as T;
    const copy = [...doc];
    copy[i] = withoutAt(doc[i] as unknown, rest);
    return copy as T;
  }
  if (!isRecord(doc) || !Object.hasOwn(doc, head)) return doc;
  if (rest.length === 0) {
    const { [head]: _gone, ...others } = doc;
    return others as T;
  }
  return { ...doc, [head]: withoutAt(doc[head], rest) } as T;
}

/**
 * `doc` with `value` at `tokens`. Missing maps on the way are created; a step through a list index that does
 * not exist, or through a scalar, leaves `doc` unchanged (there is no field there to take a value).
 */
export function withValueAt<T>(doc: T, tokens: readonly string[], value: unknown): T {
  if (tokens.length === 0) return value as T;
  const [head, ...rest] = tokens as [string, ...string[]];
  if (Array.isArray(doc)) {
    if (!/^(0|[1-9][0-9]*)$/.test(head) || Number(head) >= doc.length) return doc;
    const copy = [...doc];
    copy[Number(head)] = withValueAt(doc[Number(head)] as unknown, rest, value);
    return copy as T;
  }
  if (doc !== undefined && !isRecord(doc)) return doc;
  const base: Record<string, unknown> = isRecord(doc) ? doc : {};
  const next = rest.length === 0 ? value : withValueAt(ownField(base, head) ?? {}, rest, value);
  return { ...base, [head]: next } as T;
}
