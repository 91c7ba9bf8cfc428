/** Reads a ConfigMap's data for postBuild.substituteFrom. Values never leave this process in any message. */
import { isNotFound, type KubeClient } from './client.ts';

/** A DNS subdomain (RFC 1123), as every ConfigMap's name is. */
const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export class ConfigMaps {
  private readonly client: KubeClient;
  constructor(client: KubeClient) {
    this.client = client;
  }

  /**
   * The ConfigMap's `data` (binaryData is not text: Flux ignores it too); undefined when there is no such
   * ConfigMap. A name no ConfigMap can have is not looked up (".." would be a dot segment of the URL).
   */
  async read(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    if (!NAME.test(name) || name.length > 253) return undefined;
    try {
      const cm = await this.client.request<{ data?: Record<string, string> }>(
        'GET',
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(name)}`,
      );
      return { ...cm.data };
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }
}
