import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Agent, fetch, type Response } from 'undici';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import { MANIFEST_MEDIA_TYPES, type Descriptor } from '../../core/oci/artifact.ts';
import { parseChallenge } from '../../core/oci/challenge.ts';
import type { RegistryAuth } from '../../core/oci/credentials.ts';
import { tokenRequest } from '../../core/oci/token-request.ts';
import type { OciRepository } from '../../core/oci/reference.ts';

/**
 * The OCI distribution HTTP API, as much of it as a source and `push artifact` need: manifests, the tag
 * list, blobs. Auth follows the registry's challenge (Basic, or a Bearer token from the realm it names);
 * credentials go only to the registry's own host, never along a redirect. Failures name the artifact and
 * an HTTP status or an error code, never a header, a token or a body.
 */
export interface RegistryClientOptions {
  auth?: RegistryAuth | undefined;
  /** Plain http (loopback only: the caller checks). */
  insecure?: boolean;
  signal?: AbortSignal;
}

export interface FetchedManifest {
  body: Buffer;
  contentType: string | undefined;
  /** sha256 of the body, as the registry should name it. */
  digest: string;
}

const sha256 = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

export class RegistryClient {
  readonly #repo: OciRepository;
  readonly #auth: RegistryAuth | undefined;
  readonly #base: string;
  readonly #agent: Agent;
  readonly #signal: AbortSignal | undefined;
  #authorization: string | undefined;

  constructor(repo: OciRepository, opts: RegistryClientOptions = {}) {
    this.#repo = repo;
    this.#auth = opts.auth;
    this.#signal = opts.signal;
    this.#base = `${opts.insecure ? 'http' : 'https'}://${repo.host}/v2/${repo.repository}`;
    const ca = opts.auth?.caCert;
    this.#agent = new Agent({ connect: ca ? { ca: [...rootCertificates, ca] } : {} });
  }

  close(): Promise<void> {
    return this.#agent.close();
  }

  #failure(err: unknown, doing: string): Result<never> {
    const cause = (err as { cause?: { code?: unknown; name?: unknown } } | null)?.cause;
    const code = typeof cause?.code === 'string' ? cause.code : (err as { code?: unknown } | null)?.code;
    const name = err instanceof Error ? err.name : 'error';
    if (name === 'TimeoutError' || name === 'AbortError' || cause?.name === 'TimeoutError') {
      return fail(Reason.SourceTimeout, `${doing} ${this.#repo.url} did not finish in time`);
    }
    if (typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(code)) {
      return fail(
        Reason.FetchFailed,
        `${doing} ${this.#repo.url}: the registry's TLS certificate is not trusted (${code}): give its CA as ca.crt in spec.source.oci.certSecretRef or secretRef`,
      );
    }
    return fail(Reason.FetchFailed, `${doing} ${this.#repo.url} failed: ${typeof code === 'string' ? code : name}`);
  }

  /** One request to the registry host, answering its auth challenge once. Redirects are not followed here. */
  async #request(
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: Buffer | string },
    doing: string,
  ): Promise<Result<Response>> {
    const url = path.startsWith('http') ? path : `${this.#base}${path}`;
    const send = () =>
      fetch(url, {
        method: init.method ?? 'GET',
        headers: { ...init.headers, ...(this.#authorization ? { authorization: this.#authorization } : {}) },
        ...(init.body !== undefined ? { body: init.body } : {}),
        redirect: 'manual',
        dispatcher: this.#agent,
        ...(this.#signal ? { signal: this.#signal } : {}),
      });
    try {
      let res = await send();
      if (res.status !== 401) return ok(res);
      await res.body?.cancel();
      const challenge = parseChallenge(res.headers.get('www-authenticate'));
      const auth = this.#auth;
      const basic =
        auth?.username !== undefined
          ? `Basic ${Buffer.from(`${auth.username}:${auth.password ?? ''}`).toString('base64')}`
          : undefined;
      if (challenge?.scheme === 'bearer') {
        const token = await this.#token(challenge);
        if (!token.ok) return token;
        this.#authorization = `Bearer ${token.value}`;
      } else if (basic !== undefined && this.#authorization === undefined) {
        this.#authorization = basic;
      } else {
        return this.#denied(doing, 401);
      }
      res = await send();
      if (res.status === 401 || res.status === 403) {
        await res.body?.cancel();
        return this.#denied(doing, res.status);
      }
      return ok(res);
    } catch (err) {
      return this.#failure(err, doing);
    }
  }

  #denied(doing: string, status: number): Result<never> {
    const how =
      this.#auth?.username !== undefined || this.#auth?.identityToken !== undefined
        ? 'refused the credentials'
        : 'needs credentials';
    return fail(
      Reason.AuthenticationFailed,
      `${doing} ${this.#repo.url}: the registry ${how} (HTTP ${status}): fix the Secret named by spec.source.oci.secretRef`,
    );
  }

  /** A token from the realm the challenge names (core/oci/token-request.ts says how to ask). */
  async #token(challenge: { realm: string; service?: string; scope?: string }): Promise<Result<string>> {
    let realm: URL;
    try {
      realm = new URL(challenge.realm);
    } catch {
      return fail(Reason.FetchFailed, `${this.#repo.url}: the registry's token realm is not a URL`);
    }
    if (realm.protocol !== 'https:' && !(realm.protocol === 'http:' && this.#base.startsWith('http:'))) {
      return fail(Reason.FetchFailed, `${this.#repo.url}: the registry's token realm is not https`);
    }
    const req = tokenRequest(challenge, this.#repo.repository, this.#auth);
    const res = await fetch(req.url, {
      method: req.method,
      headers: req.headers,
      ...(req.body !== undefined ? { body: req.body } : {}),
      dispatcher: this.#agent,
      redirect: 'error',
      ...(this.#signal ? { signal: this.#signal } : {}),
    });
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      return this.#denied('asking for a token for', res.status);
    }
    if (!res.ok) {
      await res.body?.cancel();
      return fail(Reason.FetchFailed, `asking for a token for ${this.#repo.url} failed: HTTP ${res.status}`);
    }
    const body = (await res.json().catch(() => ({}))) as { token?: unknown; access_token?: unknown };
    const token = typeof body.token === 'string' ? body.token : body.access_token;
    if (typeof token !== 'string' || token === '')
      return fail(Reason.FetchFailed, `the token server for ${this.#repo.url} sent no token`);
    return ok(token);
  }

  /** The manifest for a tag or digest; its body hashed (the caller checks it against what it asked for). */
  async manifest(reference: string): Promise<Result<FetchedManifest>> {
    const doing = `reading the manifest ${reference} of`;
    const res = await this.#request(
      `/manifests/${reference}`,
      { headers: { accept: MANIFEST_MEDIA_TYPES.join(', ') } },
      doing,
    );
    if (!res.ok) return res;
    const r = res.value;
    if (r.status === 404) {
      await r.body?.cancel();
      return fail(
        Reason.RefNotFound,
        `${reference} not found in ${this.#repo.url}: push it, or fix spec.source.oci.ref`,
      );
    }
    if (!r.ok) {
      await r.body?.cancel();
      return fail(Reason.FetchFailed, `${doing} ${this.#repo.url} failed: HTTP ${r.status}`);
    }
    const body = Buffer.from(await r.arrayBuffer());
    if (body.length > 4 << 20)
      return fail(Reason.ArtifactTooLarge, `the manifest ${reference} of ${this.#repo.url} is over 4 MiB`, {
        terminal: true,
      });
    return ok({ body, contentType: r.headers.get('content-type') ?? undefined, digest: sha256(body) });
  }

  /** Every tag of the repository (the registry pages with Link headers). */
  async tags(): Promise<Result<string[]>> {
    const tags: string[] = [];
    let next: string | undefined = '/tags/list?n=1000';
    for (let page = 0; next !== undefined && page < 100; page++) {
      const res = await this.#request(next, {}, 'listing the tags of');
      if (!res.ok) return res;
      const r = res.value;
      if (r.status === 404) {
        await r.body?.cancel();
        return fail(
          Reason.RefNotFound,
          `${this.#repo.url} does not exist: push a tag to it, or fix spec.source.oci.url`,
        );
      }
      if (!r.ok) {
        await r.body?.cancel();
        return fail(Reason.FetchFailed, `listing the tags of ${this.#repo.url} failed: HTTP ${r.status}`);
      }
      const body = (await r.json().catch(() => ({}))) as { tags?: unknown };
      if (Array.isArray(body.tags)) tags.push(...body.tags.filter((t): t is string => typeof t === 'string'));
      const link = /<([^>]+)>;\s*rel="?next"?/.exec(r.headers.get('link') ?? '')?.[1];
      next = link === undefined ? undefined : link.replace(/^\/v2\/[^?]*\/tags\/list/, '/tags/list');
    }
    return ok(tags);
  }

  /**
   * Streams a blob into `file`, hashing as it goes: a blob longer than its descriptor says is cut off, one
   * that does not hash to its digest is refused. A redirect (storage behind the registry) is followed
   * without the registry's credentials.
   */
  async downloadBlob(blob: Descriptor, file: string, artifact: string): Promise<Result<void>> {
    const doing = `downloading layer ${blob.digest} of`;
    const first = await this.#request(`/blobs/${blob.digest}`, {}, doing);
    if (!first.ok) return first;
    let r = first.value;
    if ([301, 302, 303, 307, 308].includes(r.status)) {
      const location = r.headers.get('location');
      await r.body?.cancel();
      if (!location) return fail(Reason.FetchFailed, `${doing} ${this.#repo.url}: a redirect without a location`);
      try {
        const target = new URL(location, `${this.#base}/`);
        if (target.protocol !== 'https:' && !this.#base.startsWith('http:'))
          return fail(Reason.FetchFailed, `${doing} ${this.#repo.url}: redirected to plain http`);
        r = await fetch(target, {
          dispatcher: this.#agent,
          redirect: 'follow',
          ...(this.#signal ? { signal: this.#signal } : {}),
        });
      } catch (err) {
        return this.#failure(err, doing);
      }
    }
    if (!r.ok || !r.body) {
      await r.body?.cancel();
      return fail(Reason.FetchFailed, `${doing} ${this.#repo.url} failed: HTTP ${r.status}`);
    }
    const hash = createHash('sha256');
    let size = 0;
    const out = createWriteStream(file, { mode: 0o600 });
    try {
      for await (const chunk of r.body as AsyncIterable<Uint8Array>) {
        size += chunk.length;
        if (size > blob.size) break;
        hash.update(chunk);
        if (!out.write(chunk)) await new Promise<void>((r2) => out.once('drain', () => r2()));
      }
    } catch (err) {
      out.destroy();
      return this.#failure(err, doing);
    }
    await new Promise<void>((done, bad) => out.end((e?: Error | null) => (e ? bad(e) : done())));
    const digest = `sha256:${hash.digest('hex')}`;
    if (size !== blob.size || digest !== blob.digest) {
      return fail(
        Reason.ArtifactDigestMismatch,
        `artifact ${artifact}: layer ${blob.digest} as sent by the registry ${size > blob.size ? `is longer than its ${blob.size} bytes` : `hashes to ${digest}`}: nothing was unpacked; push the artifact again`,
        { terminal: true },
      );
    }
    return ok(undefined);
  }

  /** Uploads a blob unless the registry has it (monolithic upload: POST then PUT). */
  async pushBlob(bytes: Buffer | string): Promise<Result<Descriptor & { digest: string }>> {
    const digest = sha256(bytes);
    const size = Buffer.byteLength(bytes);
    const head = await this.#request(`/blobs/${digest}`, { method: 'HEAD' }, 'checking a blob in');
    if (!head.ok) return head;
    await head.value.body?.cancel();
    if (head.value.status === 200) return ok({ mediaType: '', digest, size });
    const start = await this.#request('/blobs/uploads/', { method: 'POST' }, 'starting an upload to');
    if (!start.ok) return start;
    await start.value.body?.cancel();
    const location = start.value.headers.get('location');
    if (start.value.status !== 202 || !location)
      return fail(Reason.FetchFailed, `starting an upload to ${this.#repo.url} failed: HTTP ${start.value.status}`);
    const target = new URL(location, `${this.#base}/`);
    if (target.host !== this.#repo.host)
      return fail(Reason.FetchFailed, `the registry sent the upload of ${this.#repo.url} to another host`);
    target.searchParams.set('digest', digest);
    const put = await this.#request(
      target.toString(),
      {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: typeof bytes === 'string' ? bytes : bytes,
      },
      'uploading a blob to',
    );
    if (!put.ok) return put;
    await put.value.body?.cancel();
    if (put.value.status !== 201)
      return fail(Reason.FetchFailed, `uploading a blob to ${this.#repo.url} failed: HTTP ${put.value.status}`);
    return ok({ mediaType: '', digest, size });
  }

  async pushManifest(tag: string, body: string, mediaType: string): Promise<Result<string>> {
    const put = await this.#request(
      `/manifests/${tag}`,
      { method: 'PUT', headers: { 'content-type': mediaType }, body },
      'pushing the manifest to',
    );
    if (!put.ok) return put;
    await put.value.body?.cancel();
    if (put.value.status !== 201)
      return fail(
        Reason.FetchFailed,
        `pushing the manifest ${tag} to ${this.#repo.url} failed: HTTP ${put.value.status}`,
      );
    return ok(sha256(body));
  }
}
