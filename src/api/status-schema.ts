/**
 * The PackageSync's status (packagesync.io/v1alpha1), as zod schemas: conditions, the inventory, object counts,
 * history, failures and the health cause chain. Part of the API's single source of truth with packagesync.ts
 * (the spec): crds/ is generated from both.
 */
import { z } from 'zod';
import { DriftReportSchema } from './drift-schema.ts';

export const ConditionSchema = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  lastTransitionTime: z.string(),
  observedGeneration: z.number().int().optional(),
});

/** One inventory entry, in Flux's (cli-utils ObjMetadata) format: `<namespace>_<name>_<group>_<kind>` and the apiVersion's version. */
export const InventoryEntrySchema = z.object({ id: z.string(), v: z.string() });

/** An inventory past the spill threshold lives in shards: ConfigMaps this names (docs/adr/0027). */
export const ShardRefSchema = z.object({
  name: z.string().meta({ description: "The ConfigMap, in the PackageSync's namespace." }),
  digest: z.string().meta({ description: 'sha256 of its content: a shard never changes.' }),
  count: z.number().int().meta({ description: 'How many objects it lists.' }),
});

export const InventorySchema = z.object({
  entries: z.array(InventoryEntrySchema).meta({
    description: "Flux's format (cli-utils ObjMetadata). Empty when the inventory spilled into shards.",
  }),
  shards: z.array(ShardRefSchema).optional().meta({
    description: 'Past the spill threshold (4,000 objects by default): the ConfigMaps that list the objects.',
  }),
  count: z.number().int().optional().meta({ description: 'How many objects the shards list in all.' }),
});

export const ObjectCountsSchema = z.object({
  total: z.number().int(),
  current: z.number().int(),
  inProgress: z.number().int(),
  failed: z.number().int(),
  terminating: z.number().int(),
  unknown: z.number().int(),
});

export const HistoryEntrySchema = z.object({
  revision: z.string(),
  result: z.string(),
  startedAt: z.string(),
  durationSeconds: z.number(),
  created: z.number().int(),
  configured: z.number().int(),
  pruned: z.number().int(),
  digest: z.string(),
});

export const ObjectFailureSchema = z.object({
  object: z
    .string()
    .optional()
    .meta({ description: 'The object, as Kind/namespace/name (Kind.group for custom kinds).' }),
  reason: z.string().meta({ description: 'Why, as a condition reason: ApplyFailed, Forbidden, DependencyFailed, …' }),
  message: z.string(),
});

export const CauseLinkSchema = z.object({
  kind: z.string().meta({ description: 'Kind (Kind.group for custom kinds).' }),
  namespace: z.string().optional(),
  name: z.string(),
  reason: z.string().optional().meta({ description: 'As the object says it: InProgress, ImagePullBackOff, …' }),
  message: z.string().optional().meta({ description: 'At most 256 characters.' }),
});

export const StatusSchema = z.object({
  observedGeneration: z.number().int().optional(),
  conditions: z.array(ConditionSchema).optional(),
  lastAttemptedRevision: z.string().optional(),
  lastAppliedRevision: z.string().optional(),
  lastHandledReconcileAt: z.string().optional(),
  inventory: InventorySchema.optional(),
  objects: ObjectCountsSchema.optional(),
  history: z.array(HistoryEntrySchema).optional(),
  failures: z.array(ObjectFailureSchema).optional().meta({
    description:
      'Every failure of the last failed reconcile, in apply order (at most 20): objects that failed, and objects skipped because something they depend on failed. Ready names the first.',
  }),
  drift: DriftReportSchema.optional().meta({
    description: 'spec.driftPolicy Detect: the objects that differ from the package now (the Drifted condition).',
  }),
  lastDriftCorrection: DriftReportSchema.optional().meta({
    description: 'spec.driftPolicy Correct: the objects the last correction of drift re-applied, and the fields.',
  }),
  cause: z
    .array(CauseLinkSchema)
    .optional()
    .meta({
      description:
        'When the last reconcile failed its health check: the chain from the object that failed (or was not ' +
        'Current at the timeout) to its first real cause, e.g. Deployment → ReplicaSet → Pod ImagePullBackOff ' +
        '(at most 5 links). Cleared by the next reconcile. `packagesync why` prints the whole chain.',
    }),
});

export type Status = z.infer<typeof StatusSchema>;
export type Condition = z.infer<typeof ConditionSchema>;
export type InventoryEntry = z.infer<typeof InventoryEntrySchema>;
export type ShardRef = z.infer<typeof ShardRefSchema>;
export type HistoryEntry = z.infer<typeof HistoryEntrySchema>;
export type ObjectFailure = z.infer<typeof ObjectFailureSchema>;
export type ObjectCounts = z.infer<typeof ObjectCountsSchema>;
export type CauseLinkStatus = z.infer<typeof CauseLinkSchema>;
