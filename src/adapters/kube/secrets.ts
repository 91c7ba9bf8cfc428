/** Reads a Secret's data for git credentials. Values never leave this process in any message. */
import { isNotFound, type KubeClient } from './client.ts';

export class Secrets {
  private readonly client: KubeClient;
  constructor(client: KubeClient) {
    this.client = client;
  }

  async read(namespace: string, name: string): Promise<Record<string, string> | undefined> {
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
