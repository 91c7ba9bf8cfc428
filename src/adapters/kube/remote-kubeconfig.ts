/**
 * A remote cluster's kubeconfig, read from a Secret (spec.kubeConfig.secretRef, Flux's semantics: the key
 * named, else `value`, else `value.yaml`). Read by our own reader (./kubeconfig.ts, docs/adr/0009), after a
 * refusal of everything that would make the controller run a program or read its own disk on a tenant's say:
 * `exec` plugins, `auth-provider`s, and file paths (certificate-authority, client-certificate, client-key,
 * tokenFile), and `insecure-skip-tls-verify: true`. Flux refuses exec and skipped TLS verification the same way
 * by default (--insecure-kubeconfig-exec=false, --insecure-kubeconfig-tls=false); a file path would hand the
 * controller's own files (its service account token, say) to whoever wrote the Secret.
 *
 * Messages name the Secret, the key, the entry and the field — never a value.
 */
import { parse, YAMLError } from 'yaml';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import { resolveKubeconfig, type Kubeconfig } from './kubeconfig.ts';

/** The keys Flux reads when secretRef.key is unset, in order. */
export const DEFAULT_KUBECONFIG_KEYS = ['value', 'value.yaml'] as const;

/** Fields of a kubeconfig entry that name a file on the reader's disk, or a program it would run. */
const REFUSED: Record<'cluster' | 'user', Record<string, string>> = {
  cluster: { 'certificate-authority': 'a file on the controller’s disk' },
  user: {
    'client-certificate': 'a file on the controller’s disk',
    'client-key': 'a file on the controller’s disk',
    tokenFile: 'a file on the controller’s disk',
    exec: 'a program (exec plugin) for the controller to run',
    'auth-provider': 'an auth-provider plugin for the controller to run',
  },
};

const FIX =
  'use a kubeconfig with inline credentials only (certificate-authority-data, client-certificate-data and ' +
  'client-key-data, a token, or username and password)';

/**
 * Which key of the Secret holds the kubeconfig: `key` when given (it must exist), else `value`, else
 * `value.yaml`. Undefined with the message when none is there.
 */
export function kubeconfigKey(
  data: Record<string, string>,
  key: string | undefined,
): { key: string } | { missing: string } {
  if (key !== undefined) return key in data ? { key } : { missing: `has no key ${JSON.stringify(key)}` };
  const found = DEFAULT_KUBECONFIG_KEYS.find((k) => k in data);
  return found ? { key: found } : { missing: 'has neither key "value" nor "value.yaml" (or set secretRef.key)' };
}

/**
 * The first refused field of any cluster or user entry in the document (not only the current context's:
 * a refused entry is refused wherever it is), as `users[name].exec` plus what it is; undefined when none.
 */
export function refusedField(doc: unknown): { field: string; what: string } | undefined {
  if (!doc || typeof doc !== 'object') return undefined;
  for (const kind of ['cluster', 'user'] as const) {
    const list = (doc as Record<string, unknown>)[`${kind}s`];
    if (!Array.isArray(list)) continue;
    for (const entry of list as unknown[]) {
      const e = entry as { name?: unknown } & Record<string, unknown>;
      const body = e?.[kind];
      if (!body || typeof body !== 'object') continue;
      const name = typeof e.name === 'string' ? e.name : '?';
      for (const [field, what] of Object.entries(REFUSED[kind])) {
        const v = (body as Record<string, unknown>)[field];
        if (v !== undefined && v !== null && v !== '') return { field: `${kind}s[${name}].${field}`, what };
      }
      // as Flux refuses it by default (--insecure-kubeconfig-tls=false): a tenant's Secret may not turn off
      // the check that the controller talks to the cluster it names
      if (kind === 'cluster' && (body as Record<string, unknown>)['insecure-skip-tls-verify'] === true) {
        return { field: `clusters[${name}].insecure-skip-tls-verify`, what: 'skipping TLS verification' };
      }
    }
  }
  return undefined;
}

/**
 * Parses and checks the kubeconfig in a Secret's data. `where` names the Secret (`Secret ns/name`). Every
 * failure is KubeConfigInvalid; a refused or malformed kubeconfig is terminal (only an edit of the Secret,
 * which reconciles at once, can help).
 */
export async function kubeconfigFromSecret(
  where: string,
  data: Record<string, string>,
  key: string | undefined,
): Promise<Result<Kubeconfig>> {
  const picked = kubeconfigKey(data, key);
  if ('missing' in picked) {
    return fail(Reason.KubeConfigInvalid, `${where} named in spec.kubeConfig.secretRef ${picked.missing}`, {
      terminal: true,
    });
  }
  const at = `${where} key ${picked.key}`;
  let doc: unknown;
  try {
    doc = parse(data[picked.key]!);
  } catch (e) {
    // a YAML error's message quotes the line, which may hold a token: keep only where it is
    const pos = e instanceof YAMLError ? e.linePos?.[0] : undefined;
    const line = pos ? ` at line ${pos.line}, column ${pos.col}` : '';
    return fail(Reason.KubeConfigInvalid, `kubeconfig in ${at}: not valid YAML${line}`, { terminal: true });
  }
  const refused = refusedField(doc);
  if (refused) {
    return fail(
      Reason.KubeConfigInvalid,
      `kubeconfig in ${at}: ${refused.field} names ${refused.what}, which is refused for a kubeconfig from a ` +
        `Secret; ${FIX}`,
      { terminal: true },
    );
  }
  try {
    return ok(await resolveKubeconfig([{ file: at, data: doc }]));
  } catch (e) {
    // the reader's messages name fields and entries, never values (kubeconfig.ts)
    return fail(Reason.KubeConfigInvalid, (e as Error).message, { terminal: true });
  }
}
