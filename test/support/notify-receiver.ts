/**
 * A loopback HTTPS receiver for notification tests: records every request (headers, body), checks the HMAC
 * signature when it knows the key, and answers as the test says: a status (429 with Retry-After, 500, …), or
 * not at all (a hang, until the test lets go or the receiver stops).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfSignedCert } from './tls-cert.ts';

/** The fields the tests read, whichever provider sent the body (a CloudEvent, a commit status, a chat message). */
export interface ReceivedJson {
  id: string;
  type: string;
  state: string;
  text: string;
  target_url: string;
  data: { revision: string; commit: string; reason?: string; message: string; [field: string]: unknown };
  [field: string]: unknown;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body as JSON ({} when it is not). */
  json: ReceivedJson;
  /** With a key: the X-Signature header is HMAC-SHA256 of the exact body. */
  signatureValid?: boolean;
  /** The status it was answered with (undefined: hung, never answered). */
  answered?: number;
  at: number;
}

/** 'hang': keep the request open without an answer. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface NotifyReceiver {
  url: string;
  /** PEM of the receiver's self-signed certificate: the `ca.crt` a Notifier's Secret carries. */
  ca: string;
  requests: ReceivedRequest[];
  /** Decides each answer (default 200); set it any time. */
  answer: (req: ReceivedRequest) => Answer;
  /** Answers every hanging request with 200 (or drops it with `destroy`). */
  release(destroy?: boolean): void;
  /** Stops listening and drops every connection: a sender now gets "connection refused", as from a receiver down. */
  down(): Promise<void>;
  /** Listens again on the same port (the Notifier's address stays right). */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startNotifyReceiver(opts: { hmacKey?: string } = {}): Promise<NotifyReceiver> {
  const dir = mkdtempSync(join(tmpdir(), 'notify-receiver-'));
  const { keyPath, certPath } = selfSignedCert(dir, 'receiver', '127.0.0.1', ['subjectAltName=IP:127.0.0.1']);
  const ca = readFileSync(certPath, 'utf8');
  const hanging: { res: ServerResponse; req: ReceivedRequest }[] = [];
  const receiver: NotifyReceiver = {
    url: '',
    ca,
    requests: [],
    answer: () => ({ status: 200 }),
    release(destroy = false) {
      for (const h of hanging.splice(0)) {
        if (destroy) h.res.destroy();
        else {
          h.req.answered = 200;
          h.res.writeHead(200).end();
        }
      }
    },
    async down() {
      receiver.release(true);
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
    },
    async up() {
      await new Promise<void>((r, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => r()));
    },
    async close() {
      if (server.listening) await receiver.down();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const server: Server = createServer({ key: readFileSync(keyPath), cert: ca }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json = {} as ReceivedJson;
      try {
        json = JSON.parse(body) as ReceivedJson;
      } catch {
        // not JSON: the test's own checks say so
      }
      const got: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        json,
        at: Date.now(),
      };
      if (opts.hmacKey) {
        const expected = Buffer.from(`sha256=${createHmac('sha256', opts.hmacKey).update(body).digest('hex')}`);
        const sent = Buffer.from(String(req.headers['x-signature'] ?? ''));
        got.signatureValid = sent.length === expected.length && timingSafeEqual(sent, expected);
      }
      receiver.requests.push(got);
      const a = receiver.answer(got);
      if (a === 'hang') {
        hanging.push({ res, req: got });
        return;
      }
      got.answered = a.status;
      res.writeHead(a.status, a.headers).end(a.body ?? '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  receiver.url = `https://127.0.0.1:${port}`;
  return receiver;
}
