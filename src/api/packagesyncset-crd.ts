/** The PackageSyncSet CustomResourceDefinition, from the zod schema in packagesyncset.ts (as crd.ts does for PackageSync). */
import { openApi } from './crd.ts';
import { GROUP, VERSION } from './packagesync.ts';
import { SET_KIND, SET_PLURAL, SetSpecSchema, SetStatusSchema } from './packagesyncset.ts';

type Json = Record<string, unknown>;

/**
 * The API server accepts a union of integer and string only in IntOrString's exact form: anyOf of the two bare
 * types next to x-kubernetes-int-or-string. The zod union's pattern and bound stay checked by the controller.
 */
function intOrString(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(intOrString);
  if (!node || typeof node !== 'object') return node;
  const o = node as Json;
  if (o['x-kubernetes-int-or-string'] === true) {
    return {
      'x-kubernetes-int-or-string': true,
      ...(o.description ? { description: o.description } : {}),
      anyOf: [{ type: 'integer' }, { type: 'string' }],
    };
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, intOrString(v)]));
}

export function packageSyncSetCRD(): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${SET_PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: SET_KIND,
        listKind: `${SET_KIND}List`,
        plural: SET_PLURAL,
        singular: 'packagesyncset',
        shortNames: ['pkset'],
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
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Revision', type: 'string', jsonPath: '.status.revision' },
            { name: 'Status', type: 'string', jsonPath: '.status.message', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description:
                'PackageSyncSet stamps one PackageSync per registered cluster of its namespace and rolls each new revision across them in waves.',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: intOrString(openApi(SetSpecSchema, 'input')),
                status: { ...openApi(SetStatusSchema, 'output'), default: {} },
              },
            },
          },
        },
      ],
    },
  };
}
