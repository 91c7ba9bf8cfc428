/** The drift part of the PackageSync API: spec.driftPolicy, spec.ignore, status.drift, status.lastDriftCorrection. */
import { z } from 'zod';

export const DriftPolicySchema = z
  .enum(['Correct', 'Detect'])
  .default('Correct')
  .meta({
    description:
      'What a change made in the cluster to a field the package sets gets. Correct (default): the package is ' +
      'applied again, taking the field back from the manager that changed it (an event names it). Detect: nothing ' +
      'is written; status.drift lists the objects and fields, and the Drifted condition is True.',
  });

export const IgnoreRuleSchema = z.object({
  paths: z
    .array(z.string().max(1024).regex(/^\//, 'a path is a JSON pointer such as /spec/replicas'))
    .min(1)
    .max(64)
    .meta({ description: 'JSON pointers (RFC 6901) of fields neither reported as drift nor applied over.' }),
  target: z
    .object({
      group: z.string().optional(),
      version: z.string().optional(),
      kind: z.string().optional(),
      name: z.string().optional(),
      namespace: z.string().optional(),
      labelSelector: z.string().optional(),
    })
    .optional()
    .meta({ description: 'Which objects the rule is for; none = every object of the package.' }),
});

export const IgnoreSchema = z
  .array(IgnoreRuleSchema)
  .max(100)
  .optional()
  .meta({
    description:
      'Fields another owner keeps (an HPA, a mutating webhook): not reported as drift, not reverted, and once the ' +
      'object exists the live value is applied instead of the package value. Also per object: the annotation ' +
      'packagesync.io/ignore-fields: /spec/replicas,/metadata/annotations/x.',
  });

export const DriftedObjectSchema = z.object({
  object: z.string().meta({ description: 'The object, as Kind/namespace/name (Kind.group for custom kinds).' }),
  paths: z.array(z.string()).meta({ description: 'Changed fields as JSON pointers (at most 10; never values).' }),
  missing: z.boolean().optional().meta({ description: 'The object was deleted from the cluster.' }),
  managers: z
    .array(z.string())
    .optional()
    .meta({ description: 'Field managers the fields were taken back from (Correct).' }),
});

export const DriftReportSchema = z.object({
  time: z.string(),
  total: z.number().int().meta({ description: 'How many objects drifted (objects lists at most 20).' }),
  objects: z.array(DriftedObjectSchema),
});

export type DriftPolicy = z.infer<typeof DriftPolicySchema>;
export type IgnoreRuleSpec = z.infer<typeof IgnoreRuleSchema>;
export type DriftedObjectStatus = z.infer<typeof DriftedObjectSchema>;
export type DriftReport = z.infer<typeof DriftReportSchema>;
