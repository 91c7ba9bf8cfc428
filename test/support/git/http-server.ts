import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { repoDirName } from './repo.ts';

/**
 * A real smart-HTTP git server for tests: Node's http server checks credentials, then hands the request to
 * Debian's `git http-backend` as CGI. Clone, fetch, ls-remote and push behave exactly as against a forge.
 */

export type GitHttpAuth = 'none' | { username: string; password: string } | { bearerToken: string };

export interface GitHttpServer {
  /** http://127.0.0.1:PORT/<name>.git (https:// with `tls`) */
  url(repoName: string): string;
  port: number;
  /**
   * Every request the server answered, in order (method, path, status, body bytes sent): lets tests count
   * fetches, and bench/monorepo.ts the bytes a fetch cost.
   */
  requests: { method: string; path: string; status: number; bytes: number }[];
  stop(): Promise<void>;
}

export interface GitHttpServerOptions {
  /** Directory holding the bare repositories (GIT_PROJECT_ROOT). */
  root: string;
  auth?: GitHttpAuth;
  /** Serve https with this certificate and key (PEM), e.g. one signed by a test CA. */
  tls?: { cert: string; key: string };
}

const HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

export async function startGitHttpServer(opts: GitHttpServerOptions): Promise<GitHttpServer> {
  const auth = opts.auth ?? 'none';
  const children = new Set<ChildProcess>();
  const requests: GitHttpServer['requests'] = [];

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    let bytes = 0;
    const write = res.write.bind(res) as (chunk: Buffer | string) => boolean;
    res.write = ((chunk: Buffer | string) => {
      bytes += Buffer.byteLength(chunk);
      return write(chunk);
    }) as typeof res.write;
    res.on('finish', () => requests.push({ method: req.method ?? 'GET', path, status: res.statusCode, bytes }));
    if (!isDecodable(path)) {
      res.writeHead(400).end();
      return;
    }
    const user = authenticate(req, auth);
    if (user === undefined) {
      req.resume();
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' });
      res.end('authentication required\n');
      return;
    }
    const child = runBackend(req, res, opts.root, user);
    children.add(child);
    child.on('close', () => children.delete(child));
  };
  const server = opts.tls ? createTlsServer(opts.tls, handler) : createServer(handler);
  // git keeps connections alive between requests; without this, stop() would wait for the client's idle timeout.
  server.keepAliveTimeout = 1000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    requests,
    url: (repoName) => `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}/${repoDirName(repoName)}`,
    stop: async () => {
      for (const child of children) child.kill('SIGKILL');
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Returns the authenticated user name ('' for anonymous access), or undefined when the request must get a 401. */
function authenticate(req: IncomingMessage, auth: GitHttpAuth): string | undefined {
  if (auth === 'none') return '';
  const header = req.headers.authorization ?? '';
  if ('bearerToken' in auth) {
    const m = /^Bearer (.+)$/.exec(header);
    return m?.[1] !== undefined && safeEqual(m[1], auth.bearerToken) ? 'token-user' : undefined;
  }
  const m = /^Basic (.+)$/.exec(header);
  if (m?.[1] === undefined) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const ok = safeEqual(decoded.slice(0, colon), auth.username) && safeEqual(decoded.slice(colon + 1), auth.password);
  return ok ? auth.username : undefined;
}

function isDecodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function runBackend(req: IncomingMessage, res: ServerResponse, root: string, user: string): ChildProcess {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: root,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    // as GitHub and GitLab do: partial clones (--filter=blob:none) and their on-demand blob fetches
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: 'uploadpack.allowFilter',
    GIT_CONFIG_VALUE_0: 'true',
    GIT_CONFIG_KEY_1: 'uploadpack.allowAnySHA1InWant',
    GIT_CONFIG_VALUE_1: 'true',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.replace(/^\?/, ''),
    REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
    REMOTE_USER: user,
  };
  if (req.headers['content-type']) env.CONTENT_TYPE = req.headers['content-type'];
  if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length'];
  // CGI passes every request header as HTTP_*: http-backend reads HTTP_CONTENT_ENCODING (gzip'd bodies) and
  // HTTP_GIT_PROTOCOL (protocol v2) from there.
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value !== 'string' || name === 'authorization') continue;
    env[`HTTP_${name.toUpperCase().replace(/-/g, '_')}`] = value;
  }
  if (req.headers['content-encoding']) env.CONTENT_ENCODING = req.headers['content-encoding'];

  const child = spawn(HTTP_BACKEND, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  req.pipe(child.stdin);
  child.stdin.on('error', () => undefined); // the backend may exit before reading the whole body
  child.stderr.resume();
  child.on('error', () => {
    if (!res.headersSent) res.writeHead(500).end();
  });

  let head = Buffer.alloc(0);
  let headersDone = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headersDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const split = findHeaderEnd(head);
    if (!split) return;
    headersDone = true;
    writeCgiHeaders(res, head.subarray(0, split.at).toString('latin1'));
    const rest = head.subarray(split.at + split.length);
    if (rest.length > 0) res.write(rest);
  });
  child.on('close', (code) => {
    if (!headersDone) {
      if (!res.headersSent) res.writeHead(code === 0 ? 200 : 500);
    }
    res.end();
  });
  return child;
}

function findHeaderEnd(buf: Buffer): { at: number; length: number } | undefined {
  const crlf = buf.indexOf('\r\n\r\n');
  const lf = buf.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { at: crlf, length: 4 };
  if (lf >= 0) return { at: lf, length: 2 };
  return undefined;
}

function writeCgiHeaders(res: ServerResponse, block: string): void {
  let status = 200;
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else res.appendHeader(name, value);
  }
  res.writeHead(status);
}
