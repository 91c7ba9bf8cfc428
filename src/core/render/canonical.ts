import { createHash } from 'node:crypto';
import type { KubeObject } from '../object.ts';

/**
 * Orders strings by Unicode code point, which is UTF-8 byte order: the same order Go's sort.Strings and
 * `LC_ALL=C sort` give, unlike `<` on UTF-16 code units, so digests agree across tools.
 */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/**
 * JSON with object keys in code-point order at every level and no whitespace: equal data gives equal text
 * whatever order the keys were written in. Values JSON cannot carry are treated as JSON.stringify does
 * (dropped in objects, null in arrays); render never produces them.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value))
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const fields: string[] = [];
  for (const key of Object.keys(record).sort(compareUtf8)) {
    const item = record[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    fields.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
  }
  return `{${fields.join(',')}}`;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** sha256 hex of the object's canonical JSON: changes exactly when the object's data changes. */
export function objectDigest(obj: KubeObject): string {
  return sha256Hex(canonicalJson(obj));
}
