/**
 * Sends one outbound request (core/notify builds it) and says what became of it, in words safe for logs and
 * status: never the URL's path or query (a Slack or Teams webhook URL is a credential), never a header, never the
 * response body (a receiver may echo what it got).
 */
import { Agent, request, type Dispatcher } from 'undici';
import { createHash } from 'node:crypto';
import type { OutboundRequest } from '../../core/notify/request.ts';

export type SendResult =
  /** `answer`: the response body as JSON, when asked for (a lookup); never logged or reported. */
  | { outcome: 'delivered'; status: number; answer?: unknown }
  /** Worth retrying: 5xx, 408, 429, a timeout, a connection error. */
  | { outcome: 'retry'; error: string; retryAfterMs?: number; status?: number }
  /** Refused for good: another 4xx. */
  | { outcome: 'rejected'; error: string; status: number };

export interface SenderOptions {
  timeoutMs?: number;
}

const RESPONSE_LIMIT = 64 * 1024;
/** A forge's list of pull requests for one commit: a few KiB each, rarely more than a handful. */
const ANSWER_LIMIT = 1024 * 1024;

export class Sender {
  private readonly timeoutMs: number;
  /** One connection pool per CA bundle (none: the system's roots). */
  private readonly agents = new Map<string, Dispatcher>();

  constructor(opts: SenderOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 15_000;
  }

  private agent(ca: string | undefined): Dispatcher {
    const key = ca ? createHash('sha256').update(ca).digest('hex') : '';
    let agent = this.agents.get(key);
    if (!agent) {
      agent = new Agent({
        connections: 4,
        keepAliveTimeout: 30_000,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        connect: ca ? { ca } : {},
      });
      this.agents.set(key, agent);
    }
    return agent;
  }

  async send(
    req: OutboundRequest,
    opts: { ca?: string; signal?: AbortSignal; answer?: boolean } = {},
  ): Promise<SendResult> {
    const host = hostOf(req.url);
    const timeout = AbortSignal.timeout(this.timeoutMs + 1_000);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(req.url, {
        method: req.method,
        headers: req.headers,
        ...(req.method === 'GET' ? {} : { body: req.body }),
        dispatcher: this.agent(opts.ca),
        // undici's request follows no redirect: a redirect must never carry a token or a signed body elsewhere
        signal,
      });
    } catch (e) {
      return { outcome: 'retry', error: `${req.method} to ${host}: ${networkError(e)}` };
    }
    const status = res.statusCode;
    if (opts.answer && status >= 200 && status < 300) {
      const text = await readLimited(res.body, ANSWER_LIMIT);
      if (text === undefined)
        return { outcome: 'retry', error: `${req.method} to ${host}: answer cut short or too large` };
      try {
        return { outcome: 'delivered', status, answer: JSON.parse(text) as unknown };
      } catch {
        return { outcome: 'retry', error: `${req.method} to ${host}: answer is not JSON` };
      }
    }
    // read at most a little of the body (to free the connection); never report it
    await drain(res.body);
    if (status >= 200 && status < 300) return { outcome: 'delivered', status };
    const error = `${req.method} to ${host}: HTTP ${status}`;
    if (status === 429 || status === 408 || status >= 500) {
      const retryAfterMs = retryAfter(res.headers['retry-after']);
      return { outcome: 'retry', error, status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    }
    return { outcome: 'rejected', error, status };
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close().catch(() => undefined)));
    this.agents.clear();
  }
}

/** Only the host: the rest of a webhook URL may be its credential. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid URL)';
  }
}

function networkError(e: unknown): string {
  const err = e as { name?: string; code?: string; cause?: { code?: string } };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return 'no answer in time';
  const code = err?.code ?? err?.cause?.code;
  // codes only: undici's messages can quote the URL
  return code ? `connection failed (${code})` : 'connection failed';
}

/** Retry-After in seconds or as an HTTP date, capped at an hour. */
export function retryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const seconds = Number(v);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(v) - now;
  return Number.isFinite(ms) && ms >= 0 ? Math.min(ms, 3_600_000) : undefined;
}

/** The body as text, or undefined when it is larger than `limit` or cut short. */
async function readLimited(body: Dispatcher.ResponseData['body'], limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let read = 0;
  try {
    for await (const chunk of body) {
      read += (chunk as Buffer).length;
      if (read > limit) {
        body.destroy();
        return undefined;
      }
      chunks.push(chunk as Buffer);
    }
  } catch {
    return undefined;
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function drain(body: Dispatcher.ResponseData['body']): Promise<void> {
  let read = 0;
  try {
    for await (const chunk of body) {
      read += (chunk as Buffer).length;
      if (read > RESPONSE_LIMIT) {
        body.destroy();
        return;
      }
    }
  } catch {
    // a body cut short says nothing more about the delivery than the status already did
  }
}
