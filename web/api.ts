/** The browser's side of the UI's HTTP API (src/cli/ui/server.ts): typed by the server's own types. */
import type {
  Action,
  ActionResult,
  ChangeEvent,
  FleetPage,
  GraphNodeView,
  ObjectDetail,
  PackageSyncDetail,
  PlanResult,
} from '../src/cli/ui/api-types.ts';

export type {
  Action,
  ActionResult,
  ChangeEvent,
  FleetPage,
  GraphNodeView,
  ObjectDetail,
  PackageSyncDetail,
  PlanResult,
};

/** The part of `packagesync plan -o json` (docs/cli.md#plan) the object page reads. */
export interface PlanDocument {
  actions: {
    action: string;
    id: string;
    object: { group: string; kind: string; namespace: string; name: string };
    changes?: { path: string; old?: string; new?: string }[];
    fields?: string[];
    message?: string;
  }[];
}

const psPath = (namespace: string, name: string) =>
  `/api/packagesyncs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;

/** The per-server token the page was served with; actions send it back (the server checks it and its cookie). */
const csrfToken = document.querySelector('meta[name="packagesync-csrf"]')?.getAttribute('content') ?? '';

export class ApiError extends Error {}

/** Fired when the server (in the cluster) wants a token: the app shows the sign-in form. */
export const SIGN_IN_EVENT = 'packagesync-sign-in';

async function json<T>(res: Response): Promise<T> {
  const body = (await res.json().catch(() => ({ message: res.statusText }))) as T & {
    message?: string;
    signIn?: boolean;
  };
  if (res.status === 401 && body.signIn) window.dispatchEvent(new CustomEvent(SIGN_IN_EVENT));
  if (!res.ok) throw new ApiError(body.message ?? `${res.status}`);
  return body;
}

export interface WhoAmI {
  user: string;
  /** In the cluster with a session: the header offers Sign out. */
  signOut: boolean;
}

export const whoAmI = () => fetch('/api/whoami').then((r) => json<WhoAmI>(r));

/** The sign-in form's token, checked by the API server; kept by the browser as an HttpOnly cookie. */
export async function signIn(token: string): Promise<ActionResult> {
  const res = await fetch('/api/session', {
    method: 'POST',
    headers: { 'x-packagesync-csrf': csrfToken, 'content-type': 'application/json' },
    credentials: 'same-origin',
    body: JSON.stringify({ token }),
  });
  return (await res.json().catch(() => ({ ok: false, message: res.statusText }))) as ActionResult;
}

export const signOut = () =>
  fetch('/api/session', { method: 'DELETE', headers: { 'x-packagesync-csrf': csrfToken }, credentials: 'same-origin' });

export const getFleet = (query: URLSearchParams) =>
  fetch(`/api/packagesyncs?${query.toString()}`).then((r) => json<FleetPage>(r));

export const getPackageSync = (namespace: string, name: string) =>
  fetch(psPath(namespace, name)).then((r) => json<PackageSyncDetail>(r));

export interface ObjectRefParams {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

export const getObject = (namespace: string, name: string, ref: ObjectRefParams) =>
  fetch(`${psPath(namespace, name)}/object?${new URLSearchParams({ ...ref }).toString()}`).then((r) =>
    json<ObjectDetail>(r),
  );

/** Always answers: a refusal (the API server's message) comes back as ok: false. */
export async function act(namespace: string, name: string, action: Action, revision?: string): Promise<ActionResult> {
  const query = revision ? `?${new URLSearchParams({ revision }).toString()}` : '';
  const res = await fetch(`${psPath(namespace, name)}/${action}${query}`, {
    method: 'POST',
    headers: { 'x-packagesync-csrf': csrfToken },
    credentials: 'same-origin',
  });
  const body = (await res.json().catch(() => ({ ok: false, message: res.statusText }))) as ActionResult;
  return res.ok ? body : { ok: false, message: body.message };
}

/** `packagesync plan` run by the server with the viewer's credentials: its text, or its JSON document. */
export async function plan(namespace: string, name: string, output: 'text' | 'json'): Promise<PlanResult> {
  const res = await fetch(`${psPath(namespace, name)}/plan?output=${output}`, {
    method: 'POST',
    headers: { 'x-packagesync-csrf': csrfToken },
    credentials: 'same-origin',
  });
  const body = (await res.json().catch(() => ({ exitCode: -1, output: '', error: res.statusText }))) as PlanResult & {
    message?: string;
  };
  return res.ok ? body : { exitCode: -1, output: '', error: body.error ?? body.message ?? res.statusText };
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
