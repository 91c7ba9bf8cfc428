/**
 * The webhook receiver: a git forge calls POST /hook/<namespace>/<name> on a push, and every PackageSync
 * of that namespace that trusts the same token and follows the pushed repository is reconciled at once,
 * instead of at its next interval.
 *
 * Authentication is per PackageSync, as Flux's Receiver does it, without a CRD of its own: the PackageSync
 * named in the path carries the annotation `packagesync.io/webhook-secret: <Secret name>`; that Secret's key
 * `token` is the shared secret. Accepted proofs: GitHub's `X-Hub-Signature-256` (HMAC-SHA256 of the body),
 * GitLab's `X-Gitlab-Token`, or `Authorization: Bearer <token>` (anything else). All comparisons are
 * constant-time; the token never reaches a log line or a response.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PackageSync } from '../api/packagesync.ts';
import { isValidName } from '../api/names.ts';
import type { Routes } from './http.ts';

export const WEBHOOK_SECRET_ANNOTATION = 'packagesync.io/webhook-secret';
export const WEBHOOK_TOKEN_KEY = 'token';
/** GitHub caps payloads at 25 MB; push payloads are far smaller. Anything larger is refused unread. */
const MAX_BODY = 4 << 20;

export interface PackageSyncRef {
  namespace: string;
  name: string;
}

export interface WebhookDeps {
  /** The PackageSyncs of one namespace (from the watch cache when it has synced). */
  list(namespace: string): Promise<PackageSync[]>;
  /** A Secret's decoded data; undefined when it does not exist. */
  readSecret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /** Reconcile these now. */
  trigger(refs: PackageSyncRef[]): Promise<void> | void;
  log: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
  };
}

export type PushKind = 'github' | 'gitlab' | 'generic';

export interface Push {
  kind: PushKind;
  /** The forge's event name; undefined for a generic hook. */
  event?: string;
  /** Every URL the payload gives for the repository (clone, ssh, web). Empty: the named PackageSync only. */
  urls: string[];
  /** false for events that are not pushes (GitHub ping, issue events…): answered, nothing triggered. */
  isPush: boolean;
}

const NOT_FOUND = { error: 'not found' };

/** A call still unanswered after this is answered 503: a slow API server never holds the receiver's callers. */
const ANSWER_WITHIN_MS = 10_000;

export function webhookRoutes(deps: WebhookDeps, answerWithinMs = ANSWER_WITHIN_MS): Routes {
  return {
    '/hook/': async (req, res) => {
      const late = setTimeout(() => {
        if (res.headersSent) return;
        deps.log.warn({ path: req.url }, 'webhook call not handled in time: answered 503');
        reply(res, 503, { error: 'busy, try again' });
      }, answerWithinMs);
      try {
        await handle(req, res, deps);
      } finally {
        clearTimeout(late);
      }
    },
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, deps: WebhookDeps): Promise<void> {
  if (req.method !== 'POST') {
    req.resume();
    res.setHeader('allow', 'POST');
    return reply(res, 405, { error: 'method not allowed' });
  }
  const parts = new URL(req.url ?? '/', 'http://localhost').pathname.split('/').slice(2);
  const [namespace, name] = parts;
  if (parts.length !== 2 || !isValidName('namespace', namespace) || !isValidName('name', name)) {
    req.resume();
    return reply(res, 404, { error: 'not found' });
  }
  const body = await readBody(req);
  if (!body) return reply(res, 413, { error: 'payload too large' });
  const hook = `${namespace}/${name}`;

  const inNamespace = await deps.list(namespace!);
  const target = inNamespace.find((p) => p.metadata.name === name);
  const secretName = target?.metadata.annotations?.[WEBHOOK_SECRET_ANNOTATION];
  // One answer, status and body, for "no such PackageSync", "no webhook configured", "no token" and "wrong
  // proof": an unauthenticated caller cannot tell which names exist (issue 35: 401 vs 404 confirmed guesses).
  // Why it was refused goes to the log only, for the owner of the hook.
  if (!target || !secretName) return reply(res, 404, NOT_FOUND);
  const token = (await deps.readSecret(namespace!, secretName))?.[WEBHOOK_TOKEN_KEY];
  if (!token) {
    deps.log.warn({ hook, secret: secretName }, `webhook Secret has no key "${WEBHOOK_TOKEN_KEY}": refusing`);
    return reply(res, 404, NOT_FOUND);
  }
  const why = authenticate(req.headers, body, token);
  if (why) {
    deps.log.warn({ hook, why }, 'webhook call refused');
    return reply(res, 404, NOT_FOUND);
  }

  let push: Push;
  try {
    push = parsePush(req.headers, body);
  } catch {
    return reply(res, 400, { error: 'payload is not JSON' });
  }
  if (!push.isPush) return reply(res, 200, { triggered: [], ignored: push.event ?? 'event' });

  // The token authorises the PackageSyncs that name the same Secret; among them, those following the repository.
  const wanted = new Set(push.urls.map(repoIdentity).filter((u) => u !== undefined));
  const matches = inNamespace.filter(
    (p) =>
      p.metadata.annotations?.[WEBHOOK_SECRET_ANNOTATION] === secretName &&
      (wanted.size === 0 ? p.metadata.name === name : wanted.has(repoIdentity(p.spec?.source?.url ?? '') ?? '')),
  );
  const refs = matches.map((p) => ({ namespace: namespace!, name: p.metadata.name }));
  await deps.trigger(refs);
  deps.log.info({ hook, kind: push.kind, event: push.event, triggered: refs.length }, 'webhook received');
  return reply(res, 202, { triggered: refs.map((r) => `${r.namespace}/${r.name}`) });
}

type Headers = IncomingMessage['headers'];
const header = (h: Headers, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

/** undefined when the request proves it knows `token`; otherwise why not (never the token itself). */
export function authenticate(headers: Headers, body: Buffer, token: string): string | undefined {
  const signature = header(headers, 'x-hub-signature-256');
  if (signature !== undefined) {
    const m = /^sha256=([0-9a-f]{64})$/i.exec(signature.trim());
    if (!m) return 'malformed X-Hub-Signature-256';
    const expected = createHmac('sha256', token).update(body).digest();
    return timingSafeEqual(expected, Buffer.from(m[1]!, 'hex')) ? undefined : 'X-Hub-Signature-256 mismatch';
  }
  const gitlab = header(headers, 'x-gitlab-token');
  if (gitlab !== undefined) return sameSecret(gitlab, token) ? undefined : 'X-Gitlab-Token mismatch';
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(headers, 'authorization') ?? '');
  if (bearer) return sameSecret(bearer[1]!, token) ? undefined : 'bearer token mismatch';
  return 'no signature, X-Gitlab-Token or bearer token';
}

/** Constant-time for any lengths: compares fixed-size digests, so not even the length leaks. */
function sameSecret(given: string, token: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** What the payload says was pushed. Throws on a body that is neither empty nor JSON. */
export function parsePush(headers: Headers, body: Buffer): Push {
  const text = body.toString('utf8').trim();
  const payload = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  const strings = (o: unknown, keys: string[]): string[] => {
    if (!o || typeof o !== 'object') return [];
    return keys.map((k) => (o as Record<string, unknown>)[k]).filter((v): v is string => typeof v === 'string');
  };
  const github = header(headers, 'x-github-event');
  if (github !== undefined) {
    return {
      kind: 'github',
      event: github,
      urls: strings(payload.repository, ['clone_url', 'ssh_url', 'git_url', 'html_url', 'url']),
      isPush: github === 'push' || github === 'create',
    };
  }
  const gitlab = header(headers, 'x-gitlab-event');
  if (gitlab !== undefined) {
    return {
      kind: 'gitlab',
      event: gitlab,
      urls: [
        ...strings(payload.project, ['git_http_url', 'git_ssh_url', 'web_url', 'http_url', 'ssh_url']),
        ...strings(payload.repository, ['git_http_url', 'git_ssh_url', 'url', 'homepage']),
      ],
      isPush: gitlab === 'Push Hook' || gitlab === 'Tag Push Hook' || gitlab === 'System Hook',
    };
  }
  // generic: {"url": "..."} or {"urls": ["...", ...]}; an empty body triggers the named PackageSync only
  const urls = strings(payload, ['url']);
  if (Array.isArray(payload.urls)) urls.push(...payload.urls.filter((u): u is string => typeof u === 'string'));
  return { kind: 'generic', urls, isPush: true };
}

/**
 * The part of a git URL that names the repository, so https://, ssh:// and scp forms of one repository
 * compare equal: lower-case host, path without a trailing `.git` or `/`. Scheme, user and port are dropped
 * (forges serve one repository on several); undefined when the URL cannot be read.
 */
export function repoIdentity(url: string): string | undefined {
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/\/)(.+)$/.exec(url);
  let host: string;
  let path: string;
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    host = scp[1]!;
    path = scp[2]!;
  } else {
    try {
      const u = new URL(url);
      host = u.hostname;
      path = u.pathname;
    } catch {
      return undefined;
    }
  }
  path = path
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  return path ? `${host.toLowerCase()}/${path}` : undefined;
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) {
      req.destroy();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function reply(res: ServerResponse, status: number, body: object): void {
  if (res.headersSent) return; // answered 503 already (webhookRoutes)
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
