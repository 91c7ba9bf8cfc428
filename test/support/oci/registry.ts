/**
 * A real OCI registry on loopback for tests: the CNCF distribution registry (hack/oci-registry, built by
 * hack/build-cluster.sh oci-registry on first use and cached by version), on an ephemeral port, with TLS from
 * a CA made for this run and htpasswd (bcrypt) auth, or token auth (`auth: 'token'`: the Bearer flow, with
 * a token server of our own, token-server.ts); or plain http without auth (`tls: false`), for the
 * loopback-only `insecure` path.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { selfSignedCert } from '../tls-cert.ts';
import { startTokenServer, type TokenServer } from './token-server.ts';

const root = resolve(import.meta.dirname, '../../..');

export interface TestRegistry {
  /** host:port, e.g. 127.0.0.1:41234 */
  host: string;
  /** PEM of the CA that signed the registry's certificate (undefined without TLS). */
  caCert: string | undefined;
  /** The one user htpasswd knows (undefined without auth). */
  username: string | undefined;
  password: string | undefined;
  /** With `auth: 'token'`: the token server the registry sends clients to. */
  tokens?: TokenServer;
  stop(): Promise<void>;
}

export interface RegistryOptions {
  /** TLS with a per-run CA and htpasswd auth (default true); false: plain http, anonymous. */
  tls?: boolean;
  /** With TLS: htpasswd (Basic, default) or token (Bearer, from a token server started here). */
  auth?: 'htpasswd' | 'token';
}

/** The registry binary: built once per distribution version and main.go. */
export function registryBinary(): string {
  const build = resolve(root, 'hack/build-cluster.sh');
  const bin = /OCI_REGISTRY_BIN=(.*)/.exec(execFileSync(build, ['paths'], { encoding: 'utf8' }))![1]!;
  if (!existsSync(bin)) execFileSync(build, ['oci-registry'], { stdio: 'inherit' });
  return bin;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

async function makePki(dir: string): Promise<void> {
  selfSignedCert(dir, 'ca', 'packagesync-test-registry-ca', [
    'basicConstraints=critical,CA:TRUE',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  openssl(
    ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', '/CN=127.0.0.1'],
    dir,
  );
  await writeFile(
    join(dir, 'ext.cnf'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n',
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'tls.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'tls.crt',
      '-days',
      '2',
      '-extfile',
      'ext.cnf',
    ],
    dir,
  );
}

export async function startRegistry(opts: RegistryOptions = {}): Promise<TestRegistry> {
  const tls = opts.tls ?? true;
  const bin = registryBinary();
  const dir = await mkdtemp(join(tmpdir(), 'psync-registry-'));
  const username = tls ? 'pusher' : undefined;
  const password = tls ? `pw-${Math.random().toString(36).slice(2)}` : undefined;
  let config = `version: 0.1
log: {level: info, formatter: text, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: ${join(dir, 'data')}}, delete: {enabled: true}}
http: {addr: "127.0.0.1:0"${tls ? `, tls: {certificate: ${join(dir, 'tls.crt')}, key: ${join(dir, 'tls.key')}}` : ''}}
`;
  let tokens: TokenServer | undefined;
  if (tls) await makePki(dir);
  if (tls && opts.auth === 'token') {
    const [tlsKey, tlsCert] = await Promise.all(['tls.key', 'tls.crt'].map((f) => readFile(join(dir, f), 'utf8')));
    tokens = await startTokenServer({
      dir,
      tlsKey: tlsKey!,
      tlsCert: tlsCert!,
      username: username!,
      password: password!,
    });
    config +=
      `auth: {token: {realm: "${tokens.realm}", service: ${tokens.service}, issuer: ${tokens.issuer}, ` +
      `rootcertbundle: ${tokens.signingCertPath}}}\n`;
  } else if (tls) {
    const line = execFileSync(bin, ['htpasswd', username!], { input: `${password}\n`, encoding: 'utf8' });
    await writeFile(join(dir, 'htpasswd'), line);
    config += `auth: {htpasswd: {realm: packagesync-test, path: ${join(dir, 'htpasswd')}}}\n`;
  }
  await writeFile(join(dir, 'config.yml'), config);
  const child: ChildProcess = spawn(bin, ['serve', join(dir, 'config.yml')], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
  });
  const host = await new Promise<string>((ok, bad) => {
    let log = '';
    const timer = setTimeout(() => bad(new Error(`registry did not start in 30s:\n${log.slice(-2000)}`)), 30_000);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      log += chunk;
      const m = /listening on (127\.0\.0\.1:[0-9]+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        ok(m[1]!);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      bad(new Error(`registry exited (${code}):\n${log.slice(-2000)}`));
    });
  }).catch(async (e: unknown) => {
    await tokens?.stop();
    throw e;
  });
  child.stderr!.resume();
  const caCert = tls ? await readFile(join(dir, 'ca.crt'), 'utf8') : undefined;
  return {
    host,
    caCert,
    username,
    password,
    ...(tokens ? { tokens } : {}),
    async stop() {
      await tokens?.stop();
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
