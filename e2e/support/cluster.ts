/** What every e2e test needs: a client on the real control plane, kubectl, unique namespaces, polling. */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { KubeClient, isNotFound } from '../../src/adapters/kube/client.ts';
import type { KubeObject } from '../../src/core/object.ts';
import { packageSyncCollectionPath } from '../../src/adapters/kube/packagesyncs.ts';

const run = promisify(execFile);

export const kubeconfig = (): string => inject('kubeconfig');

let shared: Promise<KubeClient> | undefined;
export function kube(): Promise<KubeClient> {
  shared ??= KubeClient.create({ kubeconfig: kubeconfig() });
  return shared;
}

export async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(inject('kubectl'), ['--kubeconfig', kubeconfig(), ...args], { maxBuffer: 64 << 20 });
  return stdout;
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`;
}

export type Live = KubeObject & {
  data?: Record<string, string>;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

/** The object at `path` (an API path), or undefined when it does not exist. */

export async function get(path: string): Promise<Live | undefined> {
  try {
    return await (await kube()).request<Live>('GET', path);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** The reasons of the events about object `name` in `ns`, space-separated (kubectl's jsonpath). */
export function eventReasons(ns: string, name: string): Promise<string> {
  return kubectl(
    'get',
    'events',
    '-n',
    ns,
    '--field-selector',
    `involvedObject.name=${name}`,
    '-o',
    'jsonpath={.items[*].reason}',
  );
}

/** Creates a namespace for one test; returns its name. */
export async function createNamespace(prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  const client = await kube();
  await client.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
  });
  return name;
}

/** Polls `probe` until it returns a value other than undefined/false, or fails with the last state seen. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  { timeoutMs = 60_000, intervalMs = 250 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      // the message names the last error only while it is still the state: an early one misleads (the set's
      // first polls throw before it has a status, long before the state it misses)
      last = undefined;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Deletes a namespace, first releasing the finalizers of the PackageSyncs in it: with no controller left
 * to finalize them, they would hold the namespace in Terminating for good.
 */
export async function deleteNamespace(ns: string): Promise<void> {
  const client = await kube();
  const list = await client
    .request<{ items: { metadata: { name: string } }[] }>('GET', packageSyncCollectionPath(ns))
    .catch(() => ({ items: [] }));
  await Promise.all(
    list.items.map((ps) =>
      client
        .request('PATCH', `${packageSyncCollectionPath(ns)}/${ps.metadata.name}`, {
          contentType: 'application/merge-patch+json',
          body: { metadata: { finalizers: null } },
        })
        .catch(() => undefined),
    ),
  );
  await client.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
}

/** The namespaces a test file made, deleted together (deleteNamespace: finalizers released) at the end. */
export function trackNamespaces(): {
  create(prefix: string): Promise<string>;
  /** Deletes a namespace made some other way along with the others. */
  adopt(name: string): void;
  deleteAll(): Promise<void>;
} {
  const names: string[] = [];
  return {
    async create(prefix) {
      const name = await createNamespace(prefix);
      names.push(name);
      return name;
    },
    adopt: (name) => void names.push(name),
    deleteAll: async () => void (await Promise.all(names.map((ns) => deleteNamespace(ns)))),
  };
}
