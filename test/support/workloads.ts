/** Deployments in the states the health unit tests need (src/core/health, src/engine/wait). */
import type { KubeObject } from '../../src/core/object.ts';

export const deployment = (
  name: string,
  status: Record<string, unknown>,
  generation = 1,
  uid = `uid-${name}`,
): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'team-a', generation, uid },
  spec: { replicas: 1, selector: { matchLabels: { app: name } } },
  status,
});

export const available = {
  observedGeneration: 1,
  replicas: 1,
  updatedReplicas: 1,
  readyReplicas: 1,
  availableReplicas: 1,
  conditions: [{ type: 'Available', status: 'True' }],
};

export const starting = {
  observedGeneration: 1,
  replicas: 1,
  updatedReplicas: 1,
  readyReplicas: 0,
  availableReplicas: 0,
};
