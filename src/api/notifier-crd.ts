/** The Notifier CustomResourceDefinition, from the zod schema in notifier.ts (as crd.ts does for PackageSync). */
import { openApi } from './crd.ts';
import { GROUP, VERSION } from './packagesync.ts';
import { NOTIFIER_KIND, NOTIFIER_PLURAL, NotifierSpecSchema, NotifierStatusSchema } from './notifier.ts';

export function notifierCRD(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${NOTIFIER_PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: NOTIFIER_KIND,
        listKind: `${NOTIFIER_KIND}List`,
        plural: NOTIFIER_PLURAL,
        singular: 'notifier',
        categories: ['gitops'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Type', type: 'string', jsonPath: '.spec.type' },
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description:
                "Notifier sends the deployment records of its namespace's PackageSyncs to a webhook, a chat room or a forge's commit status.",
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: openApi(NotifierSpecSchema, 'input'),
                status: { ...openApi(NotifierStatusSchema, 'output'), default: {} },
              },
            },
          },
        },
      ],
    },
  };
}
