/** The browser's side of the UI's HTTP API (src/cli/ui/server.ts): typed by the server's own types. */
import type { Action, ActionResult, ChangeEvent, FleetPage, PackageSyncDetail } from '../src/cli/ui/api-types.ts';

export type { Action, ActionResult, ChangeEvent, FleetPage, PackageSyncDetail };

/** The per-server token the page was served with; actions send it back (the server checks it and its cookie). */
const csrfToken = document.querySelector('meta[name="packagesync-csrf"]')?.getAttribute('content') ?? '';

export class ApiError extends Error {}

async function json<T>(res: Response): Promise<T> {
  const body = (await res.json().catch(() => ({ message: res.statusText }))) as T & { message?: string };
  if (!res.ok) throw new ApiError(body.message ?? `${res.status}`);
  return body;
}

export const getFleet = (query: URLSearchParams) =>
  fetch(`/api/packagesyncs?${query.toString()}`).then((r) => json<FleetPage>(r));

export const getPackageSync = (namespace: string, name: string) =>
  fetch(`/api/packagesyncs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`).then((r) =>
    json<PackageSyncDetail>(r),
  );

/** Always answers: a refusal (the API server's message) comes back as ok: false. */
export async function act(namespace: string, name: string, action: Action): Promise<ActionResult> {
  const res = await fetch(`/api/packagesyncs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${action}`, {
    method: 'POST',
    headers: { 'x-packagesync-csrf': csrfToken },
    credentials: 'same-origin',
  });
  const body = (await res.json().catch(() => ({ ok: false, message: res.statusText }))) as ActionResult;
  return res.ok ? body : { ok: false, message: body.message };
}

type Listener = (change: ChangeEvent) => void;
const listeners = new Set<Listener>();
let source: EventSource | undefined;

/** One EventSource per page for every view: the server's shared watch, fanned out. */
export function onChange(listener: Listener): () => void {
  listeners.add(listener);
  if (!source) {
    source = new EventSource('/api/watch');
    source.onmessage = (e: MessageEvent<string>) => {
      const change = JSON.parse(e.data) as ChangeEvent;
      listeners.forEach((l) => l(change));
    };
  }
  return () => listeners.delete(listener);
}

/** Calls `fn` at most once per `ms`, the last call winning: a burst of changes is one re-read. */
export function throttle(fn: () => void, ms: number): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      fn();
    }, ms);
  };
}
