/**
 * Reads a kubeconfig, or the in-cluster service account, the way kubectl does for the common cases, without
 * @kubernetes/client-node: importing that costs ~83 MiB of RSS (docs/adr/0009). Users with `exec` or
 * `auth-provider` still get their Authorization header from client-node, imported only for them.
 *
 * Where: an explicit path; else $KUBECONFIG (files separated by ':', merged as kubectl merges them: the
 * first file that defines a cluster, user or context name wins, and so does the first current-context);
 * else ~/.kube/config; else the in-cluster service account — the order client-node's loadFromDefault uses.
 * Relative file names in a kubeconfig are relative to the file that holds them. Error messages name the
 * file and what is missing, never a token, password, key or certificate.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { parse, YAMLError } from 'yaml';
import { z } from 'zod';
import type { Kubeconfig, KubeconfigInfo, KubeHeaders, KubeTls } from './kubeconfig-types.ts';
import { delegateToClientNode, IN_CLUSTER_DIR, inCluster, material, tokenReader } from './kubeconfig-credentials.ts';

export { IN_CLUSTER_DIR };
export type { AuthKind, Kubeconfig, KubeconfigInfo, KubeHeaders, KubeTls } from './kubeconfig-types.ts';

export interface LoadOptions {
  /** An explicit kubeconfig file (--kubeconfig): wins over everything else. */
  path?: string;
  /** Environment to read KUBECONFIG, HOME and KUBERNETES_SERVICE_HOST/PORT from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The service account directory (token, ca.crt, namespace); default IN_CLUSTER_DIR. */
  inClusterDir?: string;
}

/** Finds and reads the kubeconfig as kubectl would; throws an Error that says what is missing where. */
export async function loadKubeconfig(opts: LoadOptions = {}): Promise<Kubeconfig> {
  const env = opts.env ?? process.env;
  if (opts.path) return resolveKubeconfig([readKubeconfigFile(opts.path)]);
  if (env.KUBECONFIG) {
    const named = env.KUBECONFIG.split(delimiter).filter(Boolean);
    // kubectl skips the files of the list that do not exist
    const files = named.filter((f) => existsSync(f));
    if (files.length === 0) throw new Error(`$KUBECONFIG names no file that exists (${named.join(', ')})`);
    return resolveKubeconfig(files.map(readKubeconfigFile));
  }
  const home = env.HOME || homedir();
  const userConfig = home ? join(home, '.kube', 'config') : undefined;
  if (userConfig && existsSync(userConfig)) return resolveKubeconfig([readKubeconfigFile(userConfig)]);
  const dir = opts.inClusterDir ?? IN_CLUSTER_DIR;
  if (existsSync(join(dir, 'token'))) return inCluster(dir, env);
  throw new Error(
    `no kubeconfig: no --kubeconfig, $KUBECONFIG is unset, ${userConfig ?? '~/.kube/config'} does not exist, ` +
      `and no service account token at ${join(dir, 'token')} (not in a cluster)`,
  );
}

export interface KubeconfigDocument {
  /** The file the document was read from: names it in errors, and relative paths in it resolve against it. */
  file: string;
  /** The parsed YAML (or JSON). */
  data: unknown;
}

/** Reads and parses one kubeconfig file (YAML or JSON). */
export function readKubeconfigFile(file: string): KubeconfigDocument {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`kubeconfig ${file}: cannot read it (${(e as { code?: string }).code ?? String(e)})`, { cause: e });
  }
  try {
    return { file, data: parse(text) };
  } catch (e) {
    // A YAML error's message quotes the line, which may hold a token: keep only where it is, and do not
    // attach the error as the cause (loggers print causes).
    const at = e instanceof YAMLError ? e.linePos?.[0] : undefined;
    const where = e instanceof YAMLError ? ` (${e.code}${at ? ` at line ${at.line}, column ${at.col}` : ''})` : '';
    // eslint-disable-next-line preserve-caught-error -- the cause quotes the file's text
    throw new Error(`kubeconfig ${file}: not valid YAML${where}`);
  }
}

// --- shape ------------------------------------------------------------------------------------------------

const str = z.string().nullish();

/** A named entry; its body is checked only if the current context uses it, as kubectl does. */
const Entries = z
  .array(
    z.object({
      name: z.string().min(1),
      cluster: z.unknown().optional(),
      user: z.unknown().optional(),
      context: z.unknown().optional(),
    }),
  )
  .nullish();

const FileSchema = z.object({
  clusters: Entries,
  users: Entries,
  contexts: Entries,
  'current-context': str,
});

const ContextSchema = z.object({ cluster: z.string().min(1), user: str, namespace: str });

const ClusterSchema = z.object({
  server: z.string().min(1),
  'certificate-authority': str,
  'certificate-authority-data': str,
  'insecure-skip-tls-verify': z.boolean().nullish(),
  'tls-server-name': str,
});

const ExecSchema = z
  .object({
    command: z.string().min(1),
    args: z.array(z.string()).nullish(),
    env: z.array(z.object({ name: z.string(), value: z.string() })).nullish(),
  })
  .loose();

const UserSchema = z
  .object({
    'client-certificate': str,
    'client-certificate-data': str,
    'client-key': str,
    'client-key-data': str,
    token: str,
    tokenFile: str,
    username: str,
    password: str,
    as: str,
    'as-uid': str,
    'as-groups': z.array(z.string()).nullish(),
    'as-user-extra': z.record(z.string(), z.array(z.string())).nullish(),
    exec: ExecSchema.nullish(),
    'auth-provider': z
      .object({ name: z.string().min(1), config: z.record(z.string(), z.unknown()).nullish() })
      .nullish(),
  })
  .nullish();

/** Validates `value`; the error names `where` and the field, never the value (it may be a secret). */
function check<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  const what = issue.message.endsWith('received undefined')
    ? 'is missing'
    : issue.code === 'invalid_type'
      ? `must be ${issue.expected}`
      : issue.message;
  throw new Error(`${where}: ${field ? `${field.replace(/^\./, '')} ` : ''}${what}`);
}

// --- merge and resolve ---------------------------------------------------------------------------------------

interface Found {
  body: unknown;
  file: string;
}

/**
 * Merges kubeconfig documents as kubectl merges $KUBECONFIG (the first to define a name wins, and the first
 * current-context), then reads the current context's cluster and user.
 */
export async function resolveKubeconfig(docs: KubeconfigDocument[]): Promise<Kubeconfig> {
  const source = docs.map((d) => d.file).join(delimiter);
  const clusters = new Map<string, Found>();
  const users = new Map<string, Found>();
  const contexts = new Map<string, Found>();
  let current: { name: string; file: string } | undefined;
  for (const { file, data } of docs) {
    const doc = check(FileSchema, data ?? {}, `kubeconfig ${file}`);
    const add = (
      into: Map<string, Found>,
      list: { name: string; [k: string]: unknown }[] | null | undefined,
      key: 'cluster' | 'user' | 'context',
    ) => {
      for (const e of list ?? []) if (!into.has(e.name)) into.set(e.name, { body: e[key], file });
    };
    add(clusters, doc.clusters, 'cluster');
    add(users, doc.users, 'user');
    add(contexts, doc.contexts, 'context');
    if (!current && doc['current-context']) current = { name: doc['current-context'], file };
  }
  if (!current) throw new Error(`kubeconfig ${source}: no current-context is set`);
  const ctxFound = contexts.get(current.name);
  if (!ctxFound) throw new Error(`kubeconfig ${current.file}: current-context ${current.name} is not defined`);
  const ctx = check(ContextSchema, ctxFound.body, `kubeconfig ${ctxFound.file}: context ${current.name}`);
  const clusterFound = clusters.get(ctx.cluster);
  if (!clusterFound) {
    throw new Error(
      `kubeconfig ${ctxFound.file}: context ${current.name} names cluster ${ctx.cluster}, which is not defined`,
    );
  }
  let userFound: Found | undefined;
  if (ctx.user) {
    userFound = users.get(ctx.user);
    if (!userFound) {
      throw new Error(
        `kubeconfig ${ctxFound.file}: context ${current.name} names user ${ctx.user}, which is not defined`,
      );
    }
  }

  const clusterWhere = `kubeconfig ${clusterFound.file}: cluster ${ctx.cluster}`;
  const cluster = check(ClusterSchema, clusterFound.body, clusterWhere);
  const inDir = (file: string, p: string) => (isAbsolute(p) ? p : resolve(dirname(file), p));
  const ca = material(
    clusterWhere,
    'certificate-authority',
    cluster['certificate-authority-data'],
    cluster['certificate-authority'] && inDir(clusterFound.file, cluster['certificate-authority']),
  );
  const info: KubeconfigInfo = {
    source,
    context: current.name,
    cluster: ctx.cluster,
    user: ctx.user || undefined,
    server: cluster.server.replace(/\/+$/, ''),
    namespace: ctx.namespace || undefined,
    ca,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    tlsServerName: cluster['tls-server-name'] || undefined,
    auth: [],
    impersonate: undefined,
  };
  const tls: KubeTls = { ca };
  if (info.insecureSkipTlsVerify) tls.rejectUnauthorized = false;
  if (info.tlsServerName) tls.servername = info.tlsServerName;
  if (!userFound) return { info, tls, headers: async () => ({}) };

  const userWhere = `kubeconfig ${userFound.file}: user ${ctx.user}`;
  const user = check(UserSchema, userFound.body, userWhere) ?? {};
  const cert = material(
    userWhere,
    'client-certificate',
    user['client-certificate-data'],
    user['client-certificate'] && inDir(userFound.file, user['client-certificate']),
  );
  const key = material(
    userWhere,
    'client-key',
    user['client-key-data'],
    user['client-key'] && inDir(userFound.file, user['client-key']),
  );
  if (!cert !== !key) {
    throw new Error(`${userWhere}: has a client ${cert ? 'certificate but no key' : 'key but no certificate'}`);
  }
  if (cert && key) {
    tls.cert = cert;
    tls.key = key;
    info.auth.push('client-certificate');
  }

  const fixed: KubeHeaders = {};
  if (user.as) fixed['Impersonate-User'] = user.as;
  if (user['as-uid']) fixed['Impersonate-Uid'] = user['as-uid'];
  if (user['as-groups']?.length) fixed['Impersonate-Group'] = user['as-groups'];
  for (const [k, v] of Object.entries(user['as-user-extra'] ?? {}))
    fixed[`Impersonate-Extra-${encodeURIComponent(k)}`] = v;
  if (Object.keys(fixed).length && !user.as) throw new Error(`${userWhere}: impersonates groups or extras without as`);
  info.impersonate = user.as || undefined;

  const methods = [
    user.token && 'token',
    user.tokenFile && 'tokenFile',
    (user.username || user.password) && 'username/password',
    user.exec && 'exec',
    user['auth-provider'] && 'auth-provider',
  ].filter(Boolean);
  // kubectl refuses a token with basic auth, and exec with auth-provider: any mix is refused here, except a
  // token file backing a token (the file wins, as in client-go)
  if (methods.length > 1 && !(methods.length === 2 && user.token && user.tokenFile)) {
    throw new Error(`${userWhere}: more than one way to authenticate (${methods.join(', ')}); keep one`);
  }

  let auth: () => Promise<KubeHeaders>;
  if (user.exec || user['auth-provider']) {
    const exec = user.exec && {
      ...user.exec,
      // kubectl: a command with a path separator is relative to the kubeconfig's directory
      command: user.exec.command.includes('/') ? inDir(userFound.file, user.exec.command) : user.exec.command,
    };
    info.auth.push(exec ? 'exec' : 'auth-provider');
    const delegate = await delegateToClientNode(
      ctx.user!,
      exec ?? undefined,
      user['auth-provider'] ?? undefined,
      info,
      `${userWhere}: ${exec ? 'exec plugin' : 'auth-provider'}`,
    );
    // an exec plugin may answer with a client certificate instead of (or with) a token
    const first = await delegate();
    if (first.cert && first.key && !tls.cert) {
      tls.cert = first.cert;
      tls.key = first.key;
    }
    auth = async () => (await delegate()).headers;
  } else if (user.tokenFile) {
    const read = tokenReader(inDir(userFound.file, user.tokenFile), userWhere);
    read(); // fail now if it cannot be read
    info.auth.push('token-file');
    auth = async () => ({ Authorization: `Bearer ${read()}` });
  } else if (user.token) {
    const bearer = `Bearer ${user.token}`;
    info.auth.push('token');
    auth = async () => ({ Authorization: bearer });
  } else if (user.username || user.password) {
    if (!user.username || !user.password) throw new Error(`${userWhere}: has a username or a password, not both`);
    const basic = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
    info.auth.push('basic');
    auth = async () => ({ Authorization: basic });
  } else {
    auth = async () => ({});
  }
  return { info, tls, headers: async () => ({ ...(await auth()), ...fixed }) };
}
