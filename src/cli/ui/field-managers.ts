/**
 * Which field managers own a field of a live object now (its managedFields), for the drift a page shows: the
 * status names the changed fields (JSON pointers) and, in Correct mode, whom they were taken back from; in Detect
 * mode nothing was taken back, and the live object's managedFields say who holds each field. Pure.
 *
 * fieldsV1 spells a path as `f:<field>` for map keys and, in lists, `k:{"name":"app"}` (associative lists, by key
 * fields), `v:<json>` (sets) or `i:<n>` (atomic); a JSON pointer's index is matched against the live element.
 */
import { FIELD_MANAGER } from '../../api/packagesync.ts';
import { isRecord, type KubeObject } from '../../core/object.ts';

interface ManagedFieldsEntry {
  manager?: string;
  fieldsV1?: unknown;
}

const unescape = (s: string) => s.replaceAll('~1', '/').replaceAll('~0', '~');

/** The managers (not PackageSync itself) whose fieldsV1 holds `pointer` or something inside it. */
export function managersOf(live: KubeObject, pointer: string): string[] {
  const segments = pointer.split('/').slice(1).map(unescape);
  const out = new Set<string>();
  for (const entry of (live.metadata.managedFields ?? []) as ManagedFieldsEntry[]) {
    if (!entry.manager || entry.manager === FIELD_MANAGER) continue;
    if (holds(entry.fieldsV1, live, segments)) out.add(entry.manager);
  }
  return [...out].sort();
}

function holds(fields: unknown, value: unknown, segments: string[]): boolean {
  let node = fields;
  let here = value;
  for (const seg of segments) {
    if (!isRecord(node)) return false;
    let next: unknown;
    if (Array.isArray(here) && /^\d+$/.test(seg)) {
      const element = here[Number(seg)];
      next = listKey(node, element, Number(seg));
      here = element;
    } else {
      next = node[`f:${seg}`];
      here = isRecord(here) ? here[seg] : undefined;
    }
    if (next === undefined) return false;
    node = next;
  }
  return true;
}

function listKey(node: Record<string, unknown>, element: unknown, index: number): unknown {
  for (const [key, child] of Object.entries(node)) {
    if (key === `i:${index}`) return child;
    if (key.startsWith('v:') && safeJson(key.slice(2)) === JSON.stringify(element)) return child;
    if (key.startsWith('k:') && isRecord(element)) {
      const k = parse(key.slice(2));
      if (isRecord(k) && Object.entries(k).every(([f, v]) => JSON.stringify(element[f]) === JSON.stringify(v)))
        return child;
    }
  }
  return undefined;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const safeJson = (text: string) => JSON.stringify(parse(text));
