import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { parse } from 'yaml';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import { isLoopback } from '../../core/oci/reference.ts';

/**
 * An HTTP chart repository's index.yaml, downloaded for helm (docs/adr/0041): Helm's getter asks for the whole
 * index on every `helm repo update`, reads it without a size bound and has no conditional requests, so the
 * source downloads the bytes itself (never parsing them for helm: `helm pull` reads this file as its cached
 * index and resolves the version) and keeps them per repository and credentials:
 *  - a conditional request (If-None-Match / If-Modified-Since from the last answer): a 304 keeps the cached file;
 *  - at most `maxBytes` read (an endless or gigabytes-long index is cut off and refused, never buffered);
 *  - a YAML document with more aliases than `MAX_ALIASES` refused before helm sees it (a YAML bomb: index files
 *    written by `helm repo index` have none);
 *  - credentials (basic auth) only to the repository's own scheme, host and port, across redirects too;
 *  - only https, or http to a loopback host.
 */
export const MAX_ALIASES = 100;
const MAX_REDIRECTS = 5;

export interface IndexAuth {
  username?: string;
  password?: string;
  ca?: string;
}

export interface FetchedIndex {
  /** The index file, as served: what helm reads. */
  file: string;
  /** Whether the server answered 304 (the cached copy is current). */
  notModified: boolean;
}

interface Meta {
  etag?: string;
  lastModified?: string;
}

export async function fetchIndex(
  repository: string,
  auth: IndexAuth,
  cacheDir: string,
  limits: { maxBytes: number; timeoutMs: number; signal: AbortSignal },
): Promise<Result<FetchedIndex>> {
  const what = `index.yaml of ${repository}`;
  await mkdir(cacheDir, { recursive: true, mode: 0o700 });
  const file = join(cacheDir, 'index.yaml');
  const metaFile = join(cacheDir, 'index.meta.json');
  const meta = await readMeta(metaFile, file);
  const origin = new URL(`${repository}/`).origin;
  let url = new URL('index.yaml', `${repository}/`);
  const signal = AbortSignal.any([limits.signal, AbortSignal.timeout(limits.timeoutMs)]);
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.host)))
      return fail(Reason.FetchFailed, `${what}: redirected to ${url.protocol}//${url.host}, which is not https`);
    const headers: Record<string, string> = { 'User-Agent': 'packagesync', Accept: 'application/x-yaml, */*' };
    // never to another host: a redirect elsewhere gets no credentials (Helm's pass_credentials_all: false)
    if (url.origin === origin && auth.username !== undefined)
      headers.Authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password ?? ''}`).toString('base64')}`;
    if (meta?.etag !== undefined) headers['If-None-Match'] = meta.etag;
    if (meta?.lastModified !== undefined) headers['If-Modified-Since'] = meta.lastModified;
    let res: IncomingMessage;
    try {
      res = await get(url, headers, url.origin === origin ? auth.ca : undefined, signal);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      return fail(
        Reason.FetchFailed,
        `${what}: ${signal.aborted ? 'timed out' : `the request failed (${typeof code === 'string' ? code : 'network error'})`}`,
      );
    }
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && status !== 304 && res.headers.location !== undefined) {
      res.resume();
      if (hop >= MAX_REDIRECTS) return fail(Reason.FetchFailed, `${what}: more than ${MAX_REDIRECTS} redirects`);
      url = new URL(res.headers.location, url);
      continue;
    }
    if (status === 304 && meta !== undefined) {
      res.resume();
      return ok({ file, notModified: true });
    }
    if (status === 401 || status === 403) {
      res.resume();
      return fail(
        Reason.AuthenticationFailed,
        `${what}: the repository refused the credentials (HTTP ${status}); check spec.source.chart.secretRef`,
      );
    }
    if (status !== 200) {
      res.resume();
      return fail(Reason.FetchFailed, `${what}: HTTP ${status}`);
    }
    const body = await readBounded(res, limits.maxBytes);
    if (body === undefined)
      return fail(
        Reason.ArtifactTooLarge,
        `${what} is over ${limits.maxBytes} bytes (the controller's --oci-max-layer-bytes): nothing was read further or applied; a repository this large needs a higher limit`,
        { terminal: true },
      );
    const checked = checkIndex(body.toString('utf8'), what);
    if (!checked.ok) return checked;
    // a complete file or none: staged, then renamed over the last one
    await writeFile(`${file}.tmp`, body, { mode: 0o600 });
    await rename(`${file}.tmp`, file);
    const next: Meta = {
      ...(typeof res.headers.etag === 'string' ? { etag: res.headers.etag } : {}),
      ...(typeof res.headers['last-modified'] === 'string' ? { lastModified: res.headers['last-modified'] } : {}),
    };
    await writeFile(metaFile, JSON.stringify(next), { mode: 0o600 });
    return ok({ file, notModified: false });
  }
}

/** A YAML bomb refused with its reason; any other parse error is left to helm, whose reader decides. */
export function checkIndex(text: string, what: string): Result<void> {
  try {
    parse(text, { maxAliasCount: MAX_ALIASES });
  } catch (err) {
    if (/alias/i.test((err as Error).message))
      return fail(
        Reason.ArtifactUnsafeEntry,
        `${what} expands YAML aliases past the limit of ${MAX_ALIASES} (a YAML bomb; helm repo index writes none): refused, nothing applied`,
        { terminal: true },
      );
  }
  return ok(undefined);
}

async function readMeta(metaFile: string, file: string): Promise<Meta | undefined> {
  try {
    await stat(file);
    return JSON.parse(await readFile(metaFile, 'utf8')) as Meta;
  } catch {
    await rm(metaFile, { force: true });
    return undefined;
  }
}

function get(url: URL, headers: Record<string, string>, ca: string | undefined, signal: AbortSignal) {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req =
      url.protocol === 'https:'
        ? httpsRequest(url, { headers, signal, ...(ca !== undefined ? { ca } : {}) }, resolve)
        : httpRequest(url, { headers, signal }, resolve);
    req.on('error', reject);
    req.end();
  });
}

/** The body, or undefined once it passes `max` bytes (the connection is then dropped). */
async function readBounded(res: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res) {
    size += (chunk as Buffer).length;
    if (size > max) {
      res.destroy();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
