/**
 * The PackageSync API (packagesync.io/v1alpha1), as zod schemas. This file is the single source of
 * truth: crds/ is generated from it (`make crds`), and a test fails when the two disagree.
 */
import parseDuration from 'parse-duration';
import { z } from 'zod';
import { DriftPolicySchema, IgnoreSchema } from './drift-schema.ts';
import { DecryptionSchema } from './decryption.ts';
import { keyField, nameField, namespaceField } from './names.ts';
import { GitRefSchema, SourceSchema } from './source-schema.ts';
import type { Status } from './status-schema.ts';

// the source's schemas live beside the OCI and chart sources (source-schema.ts); importable from here too
export { GitRefSchema, SourceSchema };

// the status types are part of the PackageSync type: importable from here, with it
export type {
  CauseLinkStatus,
  Condition,
  HistoryEntry,
  InventoryEntry,
  ObjectCounts,
  ObjectFailure,
  ShardRef,
  Status,
} from './status-schema.ts';

export const GROUP = 'packagesync.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'PackageSync';
export const PLURAL = 'packagesyncs';
export const FINALIZER = 'packagesync.io/finalizer';
export const FIELD_MANAGER = 'packagesync';
export const RECONCILE_REQUESTED_AT = 'packagesync.io/reconcile-requested-at';

/** Go-style durations as Flux takes them: 30s, 5m, 1h30m, 250ms. */
export const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';
export const duration = (fallback: string, what: string) =>
  z
    .string()
    .regex(new RegExp(DURATION_PATTERN), `${what} must be a duration such as 30s, 5m or 1h30m`)
    .default(fallback)
    .meta({ description: `${what} (a duration such as 30s, 5m, 1h30m). Default ${fallback}.` });

export function durationMs(value: string): number {
  const ms = parseDuration(value);
  if (ms === null || ms === undefined || !Number.isFinite(ms)) throw new Error(`not a duration: ${value}`);
  return ms;
}

// names that reach a URL or a header: Kubernetes' own rules, one validator (names.ts)
const name = nameField();

export const DependencySchema = z.object({ name, namespace: namespaceField().optional() });

/** Flux's kustomize.toolkit.fluxcd.io Selector, as spec.kustomize.patches[].target takes it. */
export const PatchSelectorSchema = z.object({
  group: z.string().optional(),
  version: z.string().optional(),
  kind: z.string().optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
  labelSelector: z.string().optional(),
  annotationSelector: z.string().optional(),
});

const stringMap = z.record(z.string(), z.string());

/**
 * Fields that shape a kustomize build, with the semantics of Flux's Kustomization (they edit the package's
 * kustomization before the build, as kustomize-controller does). Used only when the path holds a
 * kustomization.
 */
export const KustomizeSchema = z
  .object({
    patches: z
      .array(
        z.object({
          patch: z
            .string()
            .max(1 << 20)
            .meta({ description: 'A strategic merge or JSON 6902 patch, inline.' }),
          target: PatchSelectorSchema.optional(),
        }),
      )
      .optional()
      .meta({ description: 'Patches appended to the kustomization (its `patches`).' }),
    images: z
      .array(
        z.object({
          name: z.string().min(1),
          newName: z.string().optional(),
          newTag: z.string().optional(),
          digest: z.string().optional(),
        }),
      )
      .optional()
      .meta({ description: "Image overrides; an entry replaces the kustomization's entry of the same name." }),
    components: z.array(z.string().min(1).max(1024)).optional().meta({
      description: 'Components (repository paths relative to spec.source.path) appended to the kustomization.',
    }),
    namePrefix: z.string().max(253).optional().meta({ description: "Replaces the kustomization's namePrefix." }),
    nameSuffix: z.string().max(253).optional().meta({ description: "Replaces the kustomization's nameSuffix." }),
    commonMetadata: z.object({ labels: stringMap.optional(), annotations: stringMap.optional() }).optional().meta({
      description: 'Labels and annotations set on every object after the build (existing keys are replaced).',
    }),
  })
  .meta({
    description: "Flux Kustomization fields that shape the kustomize build (kustomize-controller's semantics).",
  });

export const ValuesReferenceSchema = z.object({
  kind: z.enum(['ConfigMap', 'Secret']),
  name,
  valuesKey: keyField()
    .default('values.yaml')
    .meta({ description: 'The key holding YAML values. Default values.yaml.' }),
  optional: z.boolean().default(false).meta({ description: 'A missing object or key is not an error.' }),
});

/** Render a Helm chart of the repository with `helm template`. */
export const HelmSchema = z
  .object({
    releaseName: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$/, 'releaseName must be a DNS label of at most 53 characters')
      .optional()
      .meta({ description: 'The release name the templates see. Default: the PackageSync name.' }),
    namespace: namespaceField().optional().meta({
      description: "The release namespace (.Release.Namespace). Default: targetNamespace, else the PackageSync's.",
    }),
    values: z.record(z.string(), z.unknown()).optional().meta({
      description: 'Inline values, merged last (over valuesFiles and valuesFrom).',
      'x-kubernetes-preserve-unknown-fields': true,
    }),
    valuesFiles: z
      .array(z.string().min(1).max(1024))
      .optional()
      .meta({ description: 'Values files in the repository (paths from the repository root), merged in order.' }),
    valuesFrom: z.array(ValuesReferenceSchema).optional().meta({
      description: 'ConfigMap or Secret keys of the same namespace holding values, merged after valuesFiles.',
    }),
    includeCRDs: z.boolean().default(true).meta({ description: "Render the chart's crds/ directory. Default true." }),
    lookup: z
      .boolean()
      .optional()
      .meta({
        description:
          "Answer the templates' lookup from the target cluster as the PackageSync's identity (its ServiceAccount " +
          'when it names one), as helm install would; a read the identity may not make fails the render. Such a ' +
          'package renders on every check (never cached). Default false: lookup answers nothing, as helm template.',
      }),
  })
  .meta({ description: 'Render the Helm chart at spec.source.path with helm template.' });

/** Flux's postBuild (kustomize.toolkit.fluxcd.io/v1 Kustomization spec.postBuild), field for field. */
export const SubstituteReferenceSchema = z.object({
  kind: z.enum(['ConfigMap', 'Secret']).meta({ description: 'ConfigMap or Secret.' }),
  name: name.meta({ description: 'Its name; it lives in the namespace of the PackageSync.' }),
  optional: z.boolean().default(false).meta({
    description: 'Proceed as if it were empty when it does not exist (default false: a missing one fails).',
  }),
});

export const PostBuildSchema = z.object({
  substitute: z
    .record(z.string(), z.string())
    .optional()
    .meta({
      description:
        'Variables substituted for ${name} in every object of the package; they override substituteFrom. ' +
        'Supports ${var:=default}, $${var} for a literal, and bash string functions (as Flux).',
    }),
  substituteFrom: z
    .array(SubstituteReferenceSchema)
    .optional()
    .meta({
      description:
        'ConfigMaps and Secrets whose data keys are variables; a later entry overrides an earlier one. A change to ' +
        'one triggers a reconcile.',
    }),
  substituteStrategy: z
    .enum(['WithVariables', 'Always'])
    .default('WithVariables')
    .meta({
      description:
        'WithVariables (default): substitute only when at least one variable is defined. Always: substitute even ' +
        'when none is, so ${var:=default} expressions apply.',
    }),
});

export const PruneBudgetSchema = z.object({
  maxDeletions: z.number().int().min(0).default(10).meta({
    description: 'Deletions one reconcile may always make. Default 10.',
  }),
  maxPercent: z.number().int().min(0).max(100).default(50).meta({
    description: 'Beyond maxDeletions, the most of the inventory (in percent) one reconcile may delete. Default 50.',
  }),
});

/** A revision approved to prune past spec.pruneBudget: the annotation's value is the revision, e.g. main@sha1:… */
export const PRUNE_APPROVED = 'packagesync.io/prune-approved';

/** Flux's KubeConfigReference (secretRef only): the kubeconfig of the cluster to act in, from a Secret. */
export const KubeConfigSchema = z.object({
  secretRef: z.object({
    name,
    key: keyField().optional().meta({
      description: 'The key holding the kubeconfig. Default: value, else value.yaml.',
    }),
  }),
});

export type KubeSecretRef = z.infer<typeof KubeConfigSchema>['secretRef'];

/** One entry of spec.healthCheckExprs, as Flux's Kustomization spells it (RFC-0009). */
export const HealthCheckExprSchema = z.object({
  apiVersion: z.string().min(1).meta({ description: 'apiVersion of the kind; the group counts, not the version.' }),
  kind: z.string().min(1),
  current: z.string().min(1).meta({ description: 'CEL: true when the object is healthy (Current).' }),
  inProgress: z.string().optional().meta({ description: 'CEL: true while the object is still converging.' }),
  failed: z
    .string()
    .optional()
    .meta({ description: 'CEL: true when the object failed: the health check fails at once, not at the timeout.' }),
});

export const SpecSchema = z.object({
  source: SourceSchema,
  interval: duration('5m', 'How often to re-check git and re-assert the cluster'),
  retryInterval: duration('30s', 'Back-off base after a failure'),
  timeout: duration('3m', 'Budget of one reconcile for apply and health wait'),
  prune: z.boolean().default(true).meta({ description: 'Delete objects that left the package. Default true.' }),
  wait: z
    .boolean()
    .default(true)
    .meta({ description: 'Ready only when every applied object is healthy. Default true.' }),
  suspend: z.boolean().default(false).meta({ description: 'Stop all work on this PackageSync.' }),
  healthCheckExprs: z
    .array(HealthCheckExprSchema)
    .optional()
    .meta({
      description:
        "Custom health for the kinds kstatus cannot judge, with Flux's semantics: for each object of the kind, " +
        'observedGeneration behind → in progress; else inProgress, failed, current are evaluated in that order and ' +
        "the first true decides; none true → in progress. The variables are the object's top-level fields " +
        '(metadata, spec, status).',
    }),
  targetNamespace: namespaceField()
    .optional()
    .meta({ description: 'Namespace for namespaced objects of the package that name none.' }),
  serviceAccountName: name.optional().meta({ description: 'Apply as this ServiceAccount of the same namespace.' }),
  dependsOn: z.array(DependencySchema).optional().meta({ description: 'PackageSyncs that must be Ready first.' }),
  allowEmpty: z
    .boolean()
    .default(false)
    .meta({ description: 'Accept a package that renders no objects (prunes everything).' }),
  force: z.boolean().default(false).meta({
    description: 'Take over fields owned by other managers, and recreate objects whose immutable fields changed.',
  }),
  pruneBudget: PruneBudgetSchema.default({ maxDeletions: 10, maxPercent: 50 }).meta({
    description:
      'How much one reconcile may delete without approval: more than maxDeletions objects AND more than ' +
      'maxPercent of the inventory stops the reconcile before anything is applied or deleted, until the revision ' +
      `is approved with the annotation ${PRUNE_APPROVED}: <revision>.`,
  }),
  pruneProtectedKinds: z
    .boolean()
    .default(false)
    .meta({
      description:
        'Also delete Namespaces, CustomResourceDefinitions, PersistentVolumes and PersistentVolumeClaims that left ' +
        'the package. Default false: they are left in the cluster and released from the inventory (deleting one ' +
        'deletes everything in it, every resource of its kind, or data).',
    }),
  deletionPolicy: z
    .enum(['MirrorPrune', 'Delete', 'WaitForTermination', 'Orphan'])
    .default('MirrorPrune')
    .meta({
      description:
        "What happens to the package's objects when this PackageSync is deleted (Flux's semantics). MirrorPrune " +
        '(default): Delete when spec.prune, else Orphan. Delete: delete them in reverse dependency order. ' +
        'WaitForTermination: delete them and wait, within spec.timeout, until they are gone. Orphan: leave them.',
    }),
  kustomize: KustomizeSchema.optional(),
  helm: HelmSchema.optional(),
  driftPolicy: DriftPolicySchema,
  ignore: IgnoreSchema,
  kubeConfig: KubeConfigSchema.optional().meta({
    description:
      'Apply, prune, check health and keep the inventory in the cluster this kubeconfig names (Flux spec.kubeConfig); ' +
      "status stays here. The kubeconfig may not run a program (exec, auth-provider) or name a file on the controller's disk.",
  }),
  decryption: DecryptionSchema.optional(),
  postBuild: PostBuildSchema.optional().meta({
    description:
      "Variable substitution in the rendered objects, with Flux's semantics. An object labelled or annotated " +
      'packagesync.io/substitute: disabled (or kustomize.toolkit.fluxcd.io/substitute: disabled) is left as is.',
  }),
});

export type GitRef = z.infer<typeof GitRefSchema>;
export type PostBuild = z.infer<typeof PostBuildSchema>;
export type SubstituteReference = z.infer<typeof SubstituteReferenceSchema>;
export type Spec = z.infer<typeof SpecSchema>;
export type KustomizeSpec = z.infer<typeof KustomizeSchema>;
export type HelmSpec = z.infer<typeof HelmSchema>;
export type SpecInput = z.input<typeof SpecSchema>;

export interface PackageSync {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  spec: Spec;
  status?: Status;
}
