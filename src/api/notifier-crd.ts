/** The Notifier CustomResourceDefinition, from the zod schema in notifier.ts, in the envelope crd.ts shares. */
import { AGE_COLUMN, READY_COLUMNS, namespacedCRD } from './crd.ts';
import { NOTIFIER_KIND, NOTIFIER_PLURAL, NotifierSpecSchema, NotifierStatusSchema } from './notifier.ts';

export function notifierCRD(): Record<string, unknown> {
  return namespacedCRD({
    kind: NOTIFIER_KIND,
    plural: NOTIFIER_PLURAL,
    singular: 'notifier',
    description:
      "Notifier sends the deployment records of its namespace's PackageSyncs to a webhook, a chat room or a forge's commit status.",
    printerColumns: [{ name: 'Type', type: 'string', jsonPath: '.spec.type' }, ...READY_COLUMNS, AGE_COLUMN],
    spec: NotifierSpecSchema,
    status: NotifierStatusSchema,
  });
}
