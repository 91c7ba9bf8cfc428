/** Reads a ConfigMap's data for postBuild.substituteFrom. Values never leave this process in any message. */
import { isValidName } from '../../api/names.ts';
import { isNotFound, type KubeClient } from './client.ts';

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
    if (!isValidName('name', name) || !isValidName('namespace', namespace)) return undefined;
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
