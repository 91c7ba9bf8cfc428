import type { KubeObject } from '../object.ts';

/**
 * Safe reads from objects as the API server returns them. Status fields are optional and loosely typed,
 * so every read names a default instead of trusting the shape.
 */

export function field(obj: unknown, ...path: string[]): unknown {
  let at: unknown = obj;
  for (const key of path) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

export function int(obj: unknown, path: string[], fallback: number): number {
  const value = field(obj, ...path);
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** Like int, but keeps "absent" distinct from any number (observedGeneration, partition). */
export function optionalInt(obj: unknown, path: string[]): number | undefined {
  const value = field(obj, ...path);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function str(obj: unknown, path: string[], fallback = ''): string {
  const value = field(obj, ...path);
  return typeof value === 'string' ? value : fallback;
}

export function list(obj: unknown, path: string[]): unknown[] {
  const value = field(obj, ...path);
  return Array.isArray(value) ? value : [];
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

export function conditions(obj: KubeObject): Condition[] {
  return list(obj, ['status', 'conditions']).flatMap((raw): Condition[] => {
    const type = str(raw, ['type']);
    const status = str(raw, ['status']);
    if (!type || (status !== 'True' && status !== 'False' && status !== 'Unknown')) return [];
    const reason = str(raw, ['reason']);
    const message = str(raw, ['message']);
    return [{ type, status, ...(reason ? { reason } : {}), ...(message ? { message } : {}) }];
  });
}

export function condition(obj: KubeObject, type: string): Condition | undefined {
  return conditions(obj).find((c) => c.type === type);
}

/** `Reason: message`, the way kubectl shows a cause; either half may be missing. */
export function withReason(reason: string | undefined, message: string | undefined): string {
  if (reason && message) return `${reason}: ${message}`;
  return reason || message || '';
}
