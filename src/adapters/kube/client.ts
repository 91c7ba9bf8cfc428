/**
 * A thin HTTP client for the Kubernetes API: raw JSON in and out (never re-serialised through typed
 * models, which drop fields they do not know), one keep-alive connection pool for every request, a
 * timeout on every request, and back-off on 429. Authentication and TLS come from a kubeconfig or the
 * in-cluster service account, read by ./kubeconfig.ts (not client-node: docs/adr/0009).
 */
import { Agent, request as undiciRequest, type Dispatcher } from 'undici';
import { resourceOfPath } from './request-resource.ts';
import { loadKubeconfig, type Kubeconfig, type KubeconfigInfo, type KubeHeaders, type KubeTls } from './kubeconfig.ts';

export interface KubeClientOptions {
  /** Path to a kubeconfig; unset = KUBECONFIG / ~/.kube/config / in-cluster, as kubectl does. */
  kubeconfig?: string;
  /** Per-request timeout for non-watch requests. */
  requestTimeoutMs?: number;
  /** Connections kept open to the API server. */
  connections?: number;
  /** Called after every request, for metrics; `resource` is the plural resource of its path ("" for none). */
  onRequest?: (verb: string, status: number, seconds: number, resource: string) => void;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  accept?: string;
  /** Act as this user (e.g. system:serviceaccount:ns:name), so the API server's RBAC decides. */
  impersonate?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** A Kubernetes API error: the HTTP status and the Status object's reason/message. */
export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly details: unknown;
  constructor(status: number, reason: string, message: string, details?: unknown) {
    super(message);
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = reason;
    this.details = details;
  }
}

export const isNotFound = (e: unknown): boolean => e instanceof KubeApiError && e.status === 404;
export const isConflict = (e: unknown): boolean => e instanceof KubeApiError && e.status === 409;

const MAX_429_RETRIES = 5;

export class KubeClient {
  readonly server: string;
  /** Where the kubeconfig points (server, context namespace, CA…); nothing secret. */
  readonly config: KubeconfigInfo;
  private readonly loadHeaders: () => Promise<KubeHeaders>;
  private readonly dispatcher: Dispatcher;
  private headers: KubeHeaders = {};
  private headersLoadedAt = 0;
  private readonly requestTimeoutMs: number;
  private readonly onRequest: KubeClientOptions['onRequest'];

  private constructor(
    config: KubeconfigInfo,
    tls: KubeTls,
    loadHeaders: () => Promise<KubeHeaders>,
    opts: KubeClientOptions,
  ) {
    this.config = config;
    this.loadHeaders = loadHeaders;
    this.server = config.server;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.onRequest = opts.onRequest;
    this.dispatcher = new Agent({
      connections: opts.connections ?? 64,
      keepAliveTimeout: 30_000,
      connect: { ...tls, keepAlive: true, keepAliveInitialDelay: 30_000 },
    });
  }

  static async create(opts: KubeClientOptions = {}): Promise<KubeClient> {
    const kc = await loadKubeconfig({ path: opts.kubeconfig });
    const client = new KubeClient(kc.info, kc.tls, kc.headers, opts);
    await client.refreshHeaders();
    return client;
  }

  /** A client for a kubeconfig already read (e.g. a remote cluster's, from a Secret: remote-clusters.ts). */
  static async fromKubeconfig(kc: Kubeconfig, opts: KubeClientOptions = {}): Promise<KubeClient> {
    const client = new KubeClient(kc.info, kc.tls, kc.headers, opts);
    await client.refreshHeaders();
    return client;
  }

  /** Bearer tokens (in-cluster, tokenFile, exec) rotate: re-read them every minute, not per request. */
  private async refreshHeaders(): Promise<void> {
    this.headers = { ...(await this.loadHeaders()) };
    this.headersLoadedAt = Date.now();
  }

  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    return (await this.requestWithStatus<T>(method, path, opts)).body;
  }

  /** Like request, with the HTTP status (201 Created tells a server-side apply created the object). */
  async requestWithStatus<T = unknown>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<{ status: number; body: T }> {
    const res = await this.send(method, path, opts);
    const text = await res.body.text();
    if (res.statusCode >= 400) throw toApiError(res.statusCode, text);
    return { status: res.statusCode, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /**
   * Opens a streaming request (watch); the caller consumes res.body and aborts with the signal. The body
   * may stay open for minutes, but the response headers must come within the request timeout: a watch
   * sent on a dead keep-alive connection would otherwise wait forever, before any deadman timer starts.
   */
  async stream(path: string, opts: RequestOptions): Promise<Dispatcher.ResponseData> {
    const res = await this.send('GET', path, opts, true);
    if (res.statusCode >= 400) throw toApiError(res.statusCode, await res.body.text());
    return res;
  }

  private async send(
    method: string,
    path: string,
    opts: RequestOptions,
    streaming = false,
  ): Promise<Dispatcher.ResponseData> {
    if (Date.now() - this.headersLoadedAt > 60_000) await this.refreshHeaders();
    const url = this.server + path + queryString(opts.query);
    const headers: KubeHeaders = { ...this.headers, accept: opts.accept ?? 'application/json' };
    if (opts.impersonate) {
      // Kubernetes does not chain impersonation, and with two Impersonate-User headers the kubeconfig's
      // (user.as) would win: a tenant's apply would silently run with the controller's rights. Refuse.
      const fromKubeconfig = Object.keys(this.headers).find((h) => h.toLowerCase() === 'impersonate-user');
      if (fromKubeconfig) {
        throw new KubeApiError(
          403,
          'Forbidden',
          `cannot act as ${opts.impersonate}: the kubeconfig already impersonates ${this.headers[fromKubeconfig]} ` +
            '(user.as), and impersonation does not chain; run the controller with its own credentials',
        );
      }
      headers['impersonate-user'] = opts.impersonate;
    }
    // Checked here, not by undici: undici refuses such a value with an error that, before 8.13, also left the
    // pooled connection it had picked marked busy for good, so that every later request of every PackageSync
    // queued behind it forever (issue 35: a serviceAccountName with CR/LF froze the controller). The name
    // validator keeps spec values out; this keeps anything else (a token file's stray newline) from the pool.
    const badHeader = Object.entries(headers).find(([, v]) => !(Array.isArray(v) ? v : [v]).every(isHeaderValue));
    if (badHeader) {
      throw new KubeApiError(
        400,
        'BadRequest',
        `${method} ${path}: the ${badHeader[0]} header would hold characters no HTTP header may carry (CR, LF, NUL ` +
          'or other control characters); the request was not sent',
      );
    }
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] = opts.contentType ?? 'application/json';
    }
    const timeout = opts.timeoutMs ?? this.requestTimeoutMs;
    // a stream is bounded until its headers arrive, then only by the caller's signal
    const whole = streaming ? 0 : timeout;
    const verb = verbOf(method, opts.query);
    const resource = resourceOfPath(path);
    for (let attempt = 0; ; attempt++) {
      const started = performance.now();
      const giveUp = new AbortController();
      const signals = [opts.signal, giveUp.signal, whole > 0 ? AbortSignal.timeout(whole) : undefined].filter(
        (s) => s !== undefined,
      );
      let res: Dispatcher.ResponseData;
      try {
        const sent = undiciRequest(url, {
          method: method as Dispatcher.HttpMethod,
          headers,
          body,
          dispatcher: this.dispatcher,
          signal: AbortSignal.any(signals),
          // watches stay open for minutes; the abort signal bounds everything else
          bodyTimeout: whole,
          headersTimeout: timeout,
        });
        // The answer's headers within the timeout, whatever the pool does with the signal (ADR 0032): a request
        // that undici never settles must not hold its caller, and with it a reconcile or a shutdown, for good.
        res = await settleWithin(sent, timeout + SETTLE_MARGIN_MS, giveUp, opts.signal);
      } catch (e) {
        this.onRequest?.(verb, 0, (performance.now() - started) / 1000, resource);
        if (isTimeout(e) && !opts.signal?.aborted) {
          throw new KubeApiError(
            504,
            'Timeout',
            `${method} ${path}: no answer from the API server within ${timeout} ms`,
          );
        }
        throw e;
      }
      this.onRequest?.(verb, res.statusCode, (performance.now() - started) / 1000, resource);
      if (res.statusCode === 429 && attempt < MAX_429_RETRIES) {
        await res.body.dump();
        const after = Number(res.headers['retry-after'] ?? 1);
        await sleep(Math.min(Math.max(after, 0.2), 10) * 1000 * (0.5 + Math.random()), opts.signal);
        continue;
      }
      return res;
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}

/** Beyond undici's own timeouts, how long a request may stay unsettled before the client gives up on it. */
const SETTLE_MARGIN_MS = 1_000;

/** RFC 9110 field-value, as undici checks it: tab, visible ASCII, obs-text. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const isHeaderValue = (v: string): boolean => HEADER_VALUE.test(v);

/**
 * `sent`, or a TimeoutError once `ms` have passed (or as soon as the caller's signal aborts) without it settling;
 * `giveUp` is aborted then, and an answer that still comes later is drained, so its connection goes back.
 */
function settleWithin(
  sent: Promise<Dispatcher.ResponseData>,
  ms: number,
  giveUp: AbortController,
  caller: AbortSignal | undefined,
): Promise<Dispatcher.ResponseData> {
  return new Promise((resolve, reject) => {
    let done = false;
    const quit = (why: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
      giveUp.abort(why);
      sent.then((r) => r.body.dump().catch(() => undefined)).catch(() => undefined);
      reject(why);
    };
    const onAbort = () =>
      quit(caller?.reason instanceof Error ? caller.reason : new DOMException('aborted', 'AbortError'));
    const timer = setTimeout(() => quit(new DOMException('no answer in time', 'TimeoutError')), ms);
    caller?.addEventListener('abort', onAbort, { once: true });
    sent.then(
      (r) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        caller?.removeEventListener('abort', onAbort);
        resolve(r);
      },
      (e: unknown) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        caller?.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

function isTimeout(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: string }).code;
  return (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  );
}

function verbOf(method: string, query: RequestOptions['query']): string {
  if (method === 'GET') return query?.watch ? 'WATCH' : 'GET';
  return method;
}

function queryString(query: RequestOptions['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

function toApiError(status: number, text: string): KubeApiError {
  try {
    const s = JSON.parse(text) as { reason?: string; message?: string; details?: unknown };
    return new KubeApiError(status, s.reason ?? String(status), s.message ?? text.slice(0, 500), s.details);
  } catch {
    return new KubeApiError(status, String(status), text.slice(0, 500));
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });
}
