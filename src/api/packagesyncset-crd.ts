/** The PackageSyncSet CustomResourceDefinition, from the zod schema in packagesyncset.ts (as crd.ts does for PackageSync). */
import { AGE_COLUMN, namespacedCRD, READY_COLUMNS } from './crd.ts';
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
  // only the spec carries int-or-string fields (maxParallel, failureBudget); the status is left as zod writes it
  const crd = namespacedCRD({
    kind: SET_KIND,
    plural: SET_PLURAL,
    singular: 'packagesyncset',
    shortNames: ['pkset'],
    description:
      'PackageSyncSet stamps one PackageSync per registered cluster of its namespace and rolls each new revision across them in waves.',
    printerColumns: [
      READY_COLUMNS[0]!,
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Revision', type: 'string', jsonPath: '.status.revision' },
      { name: 'Status', type: 'string', jsonPath: '.status.message', priority: 1 },
      AGE_COLUMN,
    ],
    spec: SetSpecSchema,
    status: SetStatusSchema,
  });
  return intOrString(crd) as Json;
}
