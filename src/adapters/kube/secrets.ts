/** Reads a Secret's data for git credentials. Values never leave this process in any message. */
import { isValidName } from '../../api/names.ts';
import { isNotFound, type KubeClient } from './client.ts';

export class Secrets {
  private readonly client: KubeClient;
  constructor(client: KubeClient) {
    this.client = client;
  }

  /**
   * The Secret's data, decoded; undefined when there is no such Secret. A name no Secret can have (".", "..",
   * anything but a DNS subdomain; a namespace that is not a DNS label) is not looked up at all: "." and ".." would be dot segments of the URL and
   * read the Secret list or the namespace instead.
   */
  async read(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    if (!isValidName('name', name) || !isValidName('namespace', namespace)) return undefined;
    try {
      const s = await this.client.request<{ data?: Record<string, string> }>(
        'GET',
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`,
      );
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(s.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
      return out;
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }
}
