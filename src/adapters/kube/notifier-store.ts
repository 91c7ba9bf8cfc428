/**
 * Where a Notifier's state lives (docs/adr/0040): one ConfigMap `<name>.notifier-outbox` in its namespace, owned by
 * the Notifier (deleting the Notifier deletes it), holding the state as one JSON value. Written with the
 * resourceVersion it was read at; the leader is the only writer, so a conflict means a previous leader's late
 * write, and the newer state (ours: we read it at start and kept every change since) wins by a re-read and write.
 */
import { createHash } from 'node:crypto';
import { isValidName } from '../../api/names.ts';
import { API_VERSION } from '../../api/packagesync.ts';
import { NOTIFIER_KIND } from '../../api/notifier.ts';
import { isConflict, isNotFound, type KubeClient } from './client.ts';

const KEY = 'state.json';
const SUFFIX = '.notifier-outbox';

/** The ConfigMap's name: `<notifier>.notifier-outbox`, a long name shortened with a hash so it stays unique. */
export function outboxName(notifier: string): string {
  if (notifier.length + SUFFIX.length <= 253) return `${notifier}${SUFFIX}`;
  const hash = createHash('sha256').update(notifier).digest('hex').slice(0, 10);
  return `${notifier.slice(0, 253 - SUFFIX.length - 11)}-${hash}${SUFFIX}`;
}

export interface NotifierRef {
  namespace: string;
  name: string;
  uid: string;
}

export class NotifierStore {
  private readonly client: KubeClient;
  /** The resourceVersion of each outbox as we last read or wrote it (key namespace/name). */
  private readonly versions = new Map<string, string>();

  constructor(client: KubeClient) {
    this.client = client;
  }

  private path(ns: string, name?: string): string {
    return `/api/v1/namespaces/${encodeURIComponent(ns)}/configmaps${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  /** The stored text, or undefined when there is none yet. */
  async load(ref: NotifierRef): Promise<string | undefined> {
    if (!isValidName('namespace', ref.namespace)) throw new Error(`invalid namespace ${ref.namespace}`);
    const name = outboxName(ref.name);
    try {
      const cm = await this.client.request<{ metadata: { resourceVersion: string }; data?: Record<string, string> }>(
        'GET',
        this.path(ref.namespace, name),
      );
      this.versions.set(`${ref.namespace}/${name}`, cm.metadata.resourceVersion);
      return cm.data?.[KEY];
    } catch (e) {
      if (isNotFound(e)) {
        this.versions.delete(`${ref.namespace}/${name}`);
        return undefined;
      }
      throw e;
    }
  }

  /** Writes the state; resolves once the API server stored it (so what follows may rely on it). */
  async save(ref: NotifierRef, text: string): Promise<void> {
    const name = outboxName(ref.name);
    const key = `${ref.namespace}/${name}`;
    for (let attempt = 0; attempt < 3; attempt++) {
      const resourceVersion = this.versions.get(key);
      const body = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name,
          namespace: ref.namespace,
          ...(resourceVersion ? { resourceVersion } : {}),
          labels: { 'app.kubernetes.io/managed-by': 'packagesync', 'packagesync.io/notifier': ref.name.slice(0, 63) },
          ownerReferences: [{ apiVersion: API_VERSION, kind: NOTIFIER_KIND, name: ref.name, uid: ref.uid }],
        },
        data: { [KEY]: text },
      };
      try {
        const out = resourceVersion
          ? await this.client.request<{ metadata: { resourceVersion: string } }>(
              'PUT',
              this.path(ref.namespace, name),
              { body },
            )
          : await this.client.request<{ metadata: { resourceVersion: string } }>('POST', this.path(ref.namespace), {
              body,
            });
        this.versions.set(key, out.metadata.resourceVersion);
        return;
      } catch (e) {
        // created meanwhile (409 on POST) or written by a previous leader (409 on PUT): take its version, write ours
        if (isConflict(e) || isNotFound(e)) {
          await this.load(ref).catch(() => undefined);
          continue;
        }
        throw e;
      }
    }
    throw new Error(`outbox ConfigMap ${name} kept changing under this writer`);
  }

  forget(ref: { namespace: string; name: string }): void {
    this.versions.delete(`${ref.namespace}/${outboxName(ref.name)}`);
  }
}
