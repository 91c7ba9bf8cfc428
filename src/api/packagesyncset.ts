/**
 * The PackageSyncSet API (packagesync.io/v1alpha1): one PackageSync template stamped out for every registered
 * cluster a selector picks (optionally × directories), and each new revision rolled across them in waves
 * (docs/adr/0042). Clusters are kubeconfig Secrets of the set's own namespace: no field can name another
 * namespace. crds/ is generated from this file, as from packagesync.ts.
 */
import { CronExpressionParser } from 'cron-parser';
import { z } from 'zod';
import { nameField } from './names.ts';
import { duration, DURATION_PATTERN, GROUP, SpecSchema, VERSION } from './packagesync.ts';
import { ConditionSchema } from './status-schema.ts';

export const SET_KIND = 'PackageSyncSet';
export const SET_PLURAL = 'packagesyncsets';
/** The sets' collection (of one namespace, or of all): the controller and the CLI read it. */
export const setCollectionPath = (namespace?: string) =>
  `/apis/${GROUP}/${VERSION}${namespace ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/${SET_PLURAL}`;
/** A Secret is a registered cluster only with this label (value `cluster`): a selector never reaches git credentials. */
export const CLUSTER_SECRET_LABEL = 'packagesync.io/secret-type';
export const CLUSTER_SECRET_VALUE = 'cluster';
/** On every child: the set that stamped it, and the target it stands for. */
export const SET_LABEL = 'packagesync.io/set';
export const TARGET_ANNOTATION = 'packagesync.io/target';
/** Manual approval of a wave's gate: `<wave>@<revision>` or `<wave>@<revision>:<who>` on the set. */
export const APPROVE_ANNOTATION = 'packagesync.io/approve';
/** A held rollout goes on: `<wave>@<revision>[:<who>]` naming the wave that stopped it and the held revision. */
export const RESUME_ANNOTATION = 'packagesync.io/resume';
/** On every gate Job: the set that ran it. */
export const GATE_LABEL = 'packagesync.io/gate';

/** A number of targets, or a percentage of them ("25%"): Kubernetes' IntOrString as maxUnavailable takes it. */
export const intOrPercent = (what: string) =>
  z
    .union([z.number().int().min(0), z.string().regex(/^[0-9]{1,3}%$/, `${what} must be a number or a percentage`)])
    .meta({ description: what, 'x-kubernetes-int-or-string': true });

export const LabelSelectorSchema = z
  .object({
    matchLabels: z.record(z.string(), z.string().max(63)).optional(),
    matchExpressions: z
      .array(
        z.object({
          key: z.string().min(1).max(317),
          operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
          values: z.array(z.string().max(63)).optional(),
        }),
      )
      .optional(),
  })
  .meta({ description: 'A Kubernetes label selector (matchLabels and matchExpressions, ANDed); empty matches all.' });

/** A PromQL result compared with a threshold: every sample must satisfy `<value> <operator> <threshold>`. */
export const METRIC_OPERATORS = ['<', '<=', '>', '>=', '==', '!='] as const;

export const GateSchema = z
  .object({
    name: nameField(),
    approval: z
      .object({})
      .optional()
      .meta({
        description:
          `A person approves: annotate the set ${APPROVE_ANNOTATION}=<wave>@<revision>[:<who>] (the CLI and the web ` +
          'UI write it with the user). The approval and who gave it are recorded in status.',
      }),
    http: z
      .object({
        url: z.string().max(2048).meta({ description: 'GET this URL (http or https).' }),
        expectStatus: z.number().int().min(100).max(599).default(200),
        timeout: duration('5m', 'How long the check may keep failing before the gate fails'),
      })
      .optional()
      .meta({ description: 'Passes when a GET answers expectStatus; retried until its timeout, then fails.' }),
    job: z
      .object({
        metadata: z
          .object({
            labels: z.record(z.string(), z.string()).optional(),
            annotations: z.record(z.string(), z.string()).optional(),
          })
          .optional(),
        spec: z.record(z.string(), z.unknown()).meta({
          description: "A batch/v1 JobSpec, as the API server validates it (the Pod template's restartPolicy: Never).",
          'x-kubernetes-preserve-unknown-fields': true,
        }),
        timeout: duration('10m', 'How long the Job may run before the gate fails'),
      })
      .optional()
      .meta({
        description:
          "Runs one Job in the set's namespace per wave and revision (a deterministic name: a restart never starts a " +
          "second), created as the template's serviceAccountName; passes when it completes, fails the wave when it fails.",
      }),
    metric: z
      .object({
        address: z
          .string()
          .max(2048)
          .meta({ description: 'The base URL of a Prometheus-compatible API (GET <address>/api/v1/query).' }),
        query: z.string().min(1).max(4096).meta({ description: 'A PromQL instant query.' }),
        operator: z.enum(METRIC_OPERATORS),
        threshold: z.number(),
        secretRef: z
          .object({ name: nameField() })
          .optional()
          .meta({ description: 'A Secret of the same namespace whose key `token` is sent as a bearer token.' }),
        timeout: duration('5m', 'How long the query may keep missing the threshold before the gate fails'),
      })
      .optional()
      .meta({
        description:
          'Passes when the query returns at least one sample and every sample satisfies <value> <operator> ' +
          '<threshold>; retried every 10s until its timeout, then fails.',
      }),
  })
  .refine((g) => [g.approval, g.http, g.job, g.metric].filter((x) => x !== undefined).length === 1, {
    message: 'a gate is exactly one of approval, http, job, metric',
  })
  .meta({
    description: 'Checked in order after the wave is healthy and baked; health itself is always checked first.',
    'x-kubernetes-validations': [
      {
        rule: '[has(self.approval), has(self.http), has(self.job), has(self.metric)].filter(x, x).size() == 1',
        message: 'set exactly one of approval, http, job, metric',
      },
    ],
  });

/**
 * Argo CD's sync windows, in UTC: `allow` windows (when any exist, waves start only inside one) and `deny` windows
 * (freezes: never start a wave inside one; deny wins). A window opens at each time `schedule` (5-field cron) names
 * and stays open for `duration`.
 */
function validSchedule(schedule: string): boolean {
  try {
    CronExpressionParser.parse(schedule, { tz: 'UTC' });
    return true;
  } catch {
    return false;
  }
}

export const WindowSchema = z.object({
  name: nameField(),
  kind: z.enum(['allow', 'deny']),
  schedule: z
    .string()
    .min(1)
    .max(256)
    .refine(validSchedule, 'schedule must be a cron expression such as "0 9 * * 1-5" (minute hour day month weekday)')
    .meta({ description: "When the window opens: a cron expression in UTC ('0 9 * * 1-5': weekdays at 09:00)." }),
  duration: z
    .string()
    .regex(new RegExp(DURATION_PATTERN), 'duration must be a duration such as 30m or 8h')
    .meta({ description: 'How long it stays open (a duration such as 30m, 8h).' }),
});

export const WaveSchema = z.object({
  name: nameField(),
  targets: z
    .object({
      selector: LabelSelectorSchema.optional().meta({ description: "Over the cluster Secrets' labels." }),
      count: z.number().int().min(1).optional(),
      percent: z.number().int().min(1).max(100).optional(),
    })
    .optional()
    .meta({
      description:
        'Targets not taken by an earlier wave that match selector, at most count or percent (of all targets, ' +
        'rounded up), in name order. None: every target left.',
    }),
  maxParallel: intOrPercent(
    'At most this many targets of the wave updating at once (a number or a percentage of the wave). Default: all.',
  ).optional(),
  bakeTime: duration('0s', 'How long the whole wave must stay healthy before its gates are checked'),
  progressDeadline: duration(
    '10m',
    'How long a target may take to become healthy on the new revision before it counts as failed',
  ),
  failureBudget: intOrPercent(
    'How many targets of the wave (a number, or a percentage rounded down) may fail or be unreachable. Default 0.',
  ).optional(),
  gates: z.array(GateSchema).max(8).optional(),
});

export const SetSpecSchema = z.object({
  template: z
    .object({
      metadata: z
        .object({
          labels: z.record(z.string(), z.string()).optional(),
          annotations: z.record(z.string(), z.string()).optional(),
        })
        .optional(),
      spec: SpecSchema.omit({ kubeConfig: true }).meta({
        description:
          'A PackageSync spec. Each child gets kubeConfig (its cluster), source.path (its directory, when directories ' +
          'are generated) and source.ref pinned to the exact commit of its wave.',
      }),
    })
    .meta({ description: 'The PackageSync every target gets.' }),
  generators: z.object({
    clusters: z.object({ selector: LabelSelectorSchema.optional() }).meta({
      description:
        `Secrets of this namespace labelled ${CLUSTER_SECRET_LABEL}: ${CLUSTER_SECRET_VALUE} that match selector; ` +
        'each holds a kubeconfig (key value or value.yaml, as spec.kubeConfig reads it).',
    }),
    directories: z
      .array(z.string().min(1).max(1024))
      // a monorepo of many apps on one cluster is common (Argo CD's git directory generator has no bound);
      // 500 × 1 KiB keeps the object well under etcd's 1.5 MiB
      .max(500)
      .optional()
      .meta({ description: 'Repository paths: one target per cluster × directory, instead of one per cluster.' }),
  }),
  rollout: z.object({
    waves: z.array(WaveSchema).min(1).max(32),
    windows: z
      .array(WindowSchema)
      .max(16)
      .optional()
      .meta({
        description:
          'Time windows and freezes (UTC): no wave starts, and no further target of a running wave is updated, ' +
          'outside the allow windows or inside a deny window. A revert is never held back by a window.',
      }),
    onFailure: z
      .enum(['revert', 'hold'])
      .default('revert')
      .meta({
        description:
          'When a wave exceeds its failure budget or a gate fails: revert every updated target to the last good ' +
          'revision (default), or hold everything where it is for a person.',
      }),
  }),
});

export const TARGET_HEALTH = ['Pending', 'Progressing', 'Healthy', 'Failed', 'Unreachable'] as const;
export const WAVE_PHASES = ['Pending', 'Progressing', 'Baking', 'Gating', 'Succeeded', 'Failed'] as const;
export const SET_PHASES = ['Idle', 'Progressing', 'Baking', 'Gating', 'Succeeded', 'Holding', 'Reverted'] as const;

export const TargetStatusSchema = z.object({
  name: z.string().meta({ description: 'cluster, or cluster/directory.' }),
  cluster: z.string(),
  directory: z.string().optional(),
  child: z.string().meta({ description: 'The PackageSync stamped for it.' }),
  wave: z.string().optional().meta({ description: 'The wave of the current rollout; none: not in its plan.' }),
  revision: z.string().optional().meta({ description: 'The revision it is pinned to.' }),
  health: z.enum(TARGET_HEALTH),
  reason: z.string().optional(),
  message: z.string().optional(),
  startedAt: z.string().optional(),
});

export const WaveStatusSchema = z.object({
  name: z.string(),
  phase: z.enum(WAVE_PHASES),
  size: z.number().int(),
  healthy: z.number().int(),
  failed: z.number().int(),
  budget: z.number().int(),
  startedAt: z.string().optional(),
  healthyAt: z.string().optional().meta({ description: 'The whole wave healthy since then: bake counts from here.' }),
  gatesPassed: z.array(z.string()).optional(),
  approvedBy: z.string().optional(),
  approvedAt: z.string().optional(),
  resumedBy: z.string().optional(),
  resumedAt: z.string().optional(),
  attempt: z
    .number()
    .int()
    .optional()
    .meta({ description: 'Times the wave was resumed after a hold (names its gate Jobs anew).' }),
  completedAt: z.string().optional(),
});

export const SetStatusSchema = z.object({
  observedGeneration: z.number().int().optional(),
  conditions: z.array(ConditionSchema).optional(),
  phase: z.enum(SET_PHASES).optional(),
  revision: z.string().optional().meta({ description: 'The revision being (or last) rolled out.' }),
  lastGoodRevision: z.string().optional().meta({ description: 'The last revision that went through every wave.' }),
  failedRevision: z.string().optional().meta({ description: 'A revision that failed: not rolled out again.' }),
  lastHandledResume: z
    .string()
    .optional()
    .meta({ description: `The ${RESUME_ANNOTATION} value last acted on: the same value never resumes twice.` }),
  message: z.string().optional(),
  blockedBy: z
    .object({ wave: z.string(), gate: z.string(), reason: z.string(), message: z.string(), since: z.string() })
    .optional(),
  startedAt: z.string().optional(),
  completedAt: z.string().optional(),
  waves: z.array(WaveStatusSchema).optional(),
  targets: z.array(TargetStatusSchema).optional(),
});

export type LabelSelector = z.infer<typeof LabelSelectorSchema>;
export type Gate = z.infer<typeof GateSchema>;
export type RolloutWindow = z.infer<typeof WindowSchema>;
export type MetricOperator = (typeof METRIC_OPERATORS)[number];
export type Wave = z.infer<typeof WaveSchema>;
export type SetSpec = z.infer<typeof SetSpecSchema>;
export type SetSpecInput = z.input<typeof SetSpecSchema>;
export type TargetHealth = (typeof TARGET_HEALTH)[number];
export type TargetStatus = z.infer<typeof TargetStatusSchema>;
export type WaveStatus = z.infer<typeof WaveStatusSchema>;
export type SetPhase = (typeof SET_PHASES)[number];
export type SetStatus = z.infer<typeof SetStatusSchema>;

export interface PackageSyncSet {
  apiVersion: string;
  kind: typeof SET_KIND;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  spec: SetSpec;
  status?: SetStatus;
}
