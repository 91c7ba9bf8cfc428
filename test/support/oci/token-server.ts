/**
 * A registry token server for tests, the other half of distribution's token auth (the `WWW-Authenticate:
 * Bearer realm=…,service=…,scope=…` flow Docker Hub, GHCR and ECR use): on loopback, https, port 0. It issues
 * RS256 JWTs the way distribution v3 verifies them (registry/auth/token/token.go): the signing certificate in
 * the header's `x5c` (it must chain to the registry's `rootcertbundle`), claims iss (the registry's `issuer`),
 * sub, aud (its `service`), exp/nbf/iat, jti, and `access` (type repository, name, actions).
 *
 * - GET ?service=…&scope=… with Basic credentials: the right user gets the actions it asks for, a wrong one a
 *   401, an anonymous request a token granting nothing (as Docker Hub answers for a private repository);
 * - POST of the OAuth2 refresh_token grant (docker login's identity token): the right refresh token gets the
 *   actions, a wrong one a 401.
 * Every token handed out is kept in `issued`, so tests can check none leaks into logs or status.
 */
import { createSign, randomBytes, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { selfSignedCert } from '../tls-cert.ts';

export interface TokenServer {
  /** The realm the registry's challenge names: https://127.0.0.1:PORT/token */
  realm: string;
  service: string;
  issuer: string;
  /** Path of the PEM certificate whose key signs the tokens: the registry's rootcertbundle. */
  signingCertPath: string;
  /** The identity token (refresh token) the POST grant accepts. */
  identityToken: string;
  /** Every token handed out so far. */
  issued: string[];
  /** Token requests refused for wrong credentials so far. */
  refused: { count: number };
  stop(): Promise<void>;
}

export interface TokenServerOptions {
  /** A directory for the signing key and certificate. */
  dir: string;
  /** PEM key and certificate for https (the registry's: 127.0.0.1 under the run's CA). */
  tlsKey: string;
  tlsCert: string;
  username: string;
  password: string;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export async function startTokenServer(opts: TokenServerOptions): Promise<TokenServer> {
  const signer = selfSignedCert(opts.dir, 'token-signer', 'packagesync-test-token-signer');
  const signingKey = await readFile(signer.keyPath, 'utf8');
  const signingCertPath = signer.certPath;
  const x5c = new X509Certificate(await readFile(signingCertPath)).raw.toString('base64');
  const service = 'packagesync-test-registry';
  const issuer = 'packagesync-test-token-issuer';
  const identityToken = `refresh-${randomBytes(12).toString('hex')}`;
  const issued: string[] = [];
  const refused = { count: 0 };

  /** A signed JWT granting `subject` the actions asked for in `scopes` (none for an anonymous subject). */
  const jwt = (subject: string, scopes: string[], grant: boolean): string => {
    const now = Math.floor(Date.now() / 1000);
    const access = grant
      ? scopes.flatMap((s) => {
          const m = /^(repository):(.+):([a-z*,]+)$/.exec(s);
          return m ? [{ type: m[1], name: m[2], actions: m[3]!.split(',') }] : [];
        })
      : [];
    const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', x5c: [x5c] }));
    const claims = b64url(
      JSON.stringify({
        iss: issuer,
        sub: subject,
        aud: service,
        exp: now + 300,
        nbf: now - 5,
        iat: now,
        jti: randomBytes(8).toString('hex'),
        access,
      }),
    );
    const signature = createSign('RSA-SHA256').update(`${header}.${claims}`).sign(signingKey);
    const token = `${header}.${claims}.${b64url(signature)}`;
    issued.push(token);
    return token;
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const deny = (res: ServerResponse) => {
    refused.count++;
    send(res, 401, { errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] });
  };
  const scopesOf = (params: URLSearchParams) => params.getAll('scope').flatMap((s) => s.split(' ').filter(Boolean));

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    if (url.pathname !== '/token') return send(res, 404, {});
    const now = new Date().toISOString();
    if (req.method === 'GET') {
      if (url.searchParams.get('service') !== service) return send(res, 400, { error: 'unknown service' });
      const auth = req.headers.authorization;
      if (!auth) return send(res, 200, { token: jwt('', scopesOf(url.searchParams), false), issued_at: now });
      const [user, ...rest] = Buffer.from(auth.replace(/^Basic /i, ''), 'base64')
        .toString('utf8')
        .split(':');
      if (!/^Basic /i.test(auth) || user !== opts.username || rest.join(':') !== opts.password) return deny(res);
      const token = jwt(user, scopesOf(url.searchParams), true);
      return send(res, 200, { token, access_token: token, expires_in: 300, issued_at: now });
    }
    if (req.method === 'POST') {
      let raw = '';
      for await (const chunk of req) raw += (chunk as Buffer).toString('utf8');
      const form = new URLSearchParams(raw);
      if (form.get('grant_type') !== 'refresh_token' || form.get('service') !== service)
        return send(res, 400, { error: 'unsupported_grant_type' });
      if (form.get('refresh_token') !== identityToken) return deny(res);
      const token = jwt('identity-token-user', scopesOf(form), true);
      return send(res, 200, { access_token: token, expires_in: 300, issued_at: now });
    }
    return send(res, 405, {});
  };

  const server = createServer({ key: opts.tlsKey, cert: opts.tlsCert }, (req, res) => {
    handle(req, res).catch(() => send(res, 500, {}));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    realm: `https://127.0.0.1:${port}/token`,
    service,
    issuer,
    signingCertPath,
    identityToken,
    issued,
    refused,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}
