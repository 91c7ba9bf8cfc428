/** The browser's side of the UI's HTTP API (src/cli/ui/server.ts): typed by the server's own types. */
import type {
  Action,
  ActionResult,
  ChangeEvent,
  FleetPage,
  FleetRow,
  GraphNodeView,
  ObjectDetail,
  PackageSyncDetail,
  PlanResult,
} from '../src/cli/ui/api-types.ts';
import type { SetAction, SetDetail, SetListPage, SetRow, TargetView, WaveView } from '../src/cli/ui/set-types.ts';

export type {
  Action,
  ActionResult,
  ChangeEvent,
  FleetPage,
  FleetRow,
  GraphNodeView,
  ObjectDetail,
  PackageSyncDetail,
  PlanResult,
  SetAction,
  SetDetail,
  SetListPage,
  SetRow,
  TargetView,
  WaveView,
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

type Answer<T> = { ok: boolean; status: number; body: Partial<T> & { message?: string; error?: string } };

/**
 * The one way the page asks the server: JSON back (or the status text when there is none), the CSRF token and
 * the session cookie on everything but a GET (the server checks the token against its cookie), and a 401 that
 * asks for a token shows the sign-in form.
 */
async function call<T>(path: string, method: 'GET' | 'POST' | 'DELETE' = 'GET', body?: unknown): Promise<Answer<T>> {
  const res = await fetch(
    path,
    method === 'GET'
      ? undefined
      : {
          method,
          headers: {
            'x-packagesync-csrf': csrfToken,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          credentials: 'same-origin',
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        },
  );
  const parsed = (await res.json().catch(() => ({ message: res.statusText }))) as Answer<T>['body'] & {
    signIn?: boolean;
  };
  if (res.status === 401 && parsed.signIn) window.dispatchEvent(new CustomEvent(SIGN_IN_EVENT));
  return { ok: res.ok, status: res.status, body: parsed };
}

/** A read: its body, or an ApiError with the server's message. */
async function get<T>(path: string): Promise<T> {
  const answer = await call<T>(path);
  if (!answer.ok) throw new ApiError(answer.body.message ?? `${answer.status}`);
  return answer.body as T;
}

export interface WhoAmI {
  user: string;
  /** In the cluster with a session: the header offers Sign out. */
  signOut: boolean;
}

export const whoAmI = () => get<WhoAmI>('/api/whoami');

/** The sign-in form's token, checked by the API server; kept by the browser as an HttpOnly cookie. */
export const signIn = (token: string): Promise<ActionResult> =>
  call<ActionResult>('/api/session', 'POST', { token }).then(actionResult);

export const signOut = () => call<ActionResult>('/api/session', 'DELETE');

export const getFleet = (query: URLSearchParams) => get<FleetPage>(`/api/packagesyncs?${query.toString()}`);

export const getPackageSync = (namespace: string, name: string) => get<PackageSyncDetail>(psPath(namespace, name));

export interface ObjectRefParams {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

export const getObject = (namespace: string, name: string, ref: ObjectRefParams) =>
  get<ObjectDetail>(`${psPath(namespace, name)}/object?${new URLSearchParams({ ...ref }).toString()}`);

/** An action's answer, a refusal (the API server's message) too, as ok and a message. */
const actionResult = ({ ok, body }: Answer<ActionResult>): ActionResult => ({
  ok: ok && body.ok !== false,
  message: body.message ?? '',
});

/** Always answers: a refusal (the API server's message) comes back as ok: false. */
export function act(namespace: string, name: string, action: Action, revision?: string): Promise<ActionResult> {
  const query = revision ? `?${new URLSearchParams({ revision }).toString()}` : '';
  return call<ActionResult>(`${psPath(namespace, name)}/${action}${query}`, 'POST').then(actionResult);
}

const setPath = (namespace: string, name: string) =>
  `/api/packagesyncsets/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;

export const getSets = (query: URLSearchParams) => get<SetListPage>(`/api/packagesyncsets?${query.toString()}`);

export const getSet = (namespace: string, name: string) => get<SetDetail>(setPath(namespace, name));

/** Approve or resume `wave` of `revision`, as the page shows them; a refusal comes back as ok: false. */
export function actOnSet(
  namespace: string,
  name: string,
  action: SetAction,
  wave: string,
  revision: string,
): Promise<ActionResult> {
  const query = new URLSearchParams({ wave, revision }).toString();
  return call<ActionResult>(`${setPath(namespace, name)}/${action}?${query}`, 'POST').then(actionResult);
}

/** `packagesync plan` run by the server with the viewer's credentials: its text, or its JSON document. */
export async function plan(namespace: string, name: string, output: 'text' | 'json'): Promise<PlanResult> {
  const { ok, body } = await call<PlanResult>(`${psPath(namespace, name)}/plan?output=${output}`, 'POST');
  if (ok) return body as PlanResult;
  return { exitCode: -1, output: '', error: body.error ?? body.message ?? 'the plan did not run' };
}

/**
 * A PackageSync changed; undefined: the stream (re)connected, so anything may have changed since the view last
 * read it — a write between a page's first read and its stream's opening (or during a reconnect) sends no event
 * this page hears.
 */
type Listener = (change: ChangeEvent | undefined) => void;
const listeners = new Set<Listener>();
let source: EventSource | undefined;

/** One EventSource per page for every view: the server's shared watch, fanned out. */
export function onChange(listener: Listener): () => void {
  listeners.add(listener);
  if (!source) {
    source = new EventSource('/api/watch');
    source.onopen = () => listeners.forEach((l) => l(undefined));
    source.onmessage = (e: MessageEvent<string>) => {
      const change = JSON.parse(e.data) as ChangeEvent;
      listeners.forEach((l) => l(change));
    };
  }
  return () => listeners.delete(listener);
}
