/**
 * The Notifier API (packagesync.io/v1alpha1): where a namespace's deployment records go (docs/adr/0040). A
 * Notifier selects PackageSyncs of its own namespace only and reads a Secret of its own namespace only: there is
 * no field that could name another namespace. crds/ is generated from this file, as from packagesync.ts.
 */
import { z } from 'zod';
import { nameField } from './names.ts';
import { ConditionSchema, type Condition } from './status-schema.ts';

export const NOTIFIER_KIND = 'Notifier';
export const NOTIFIER_PLURAL = 'notifiers';

export const PROVIDER_TYPES = ['generic', 'slack', 'msteams', 'github', 'gitlab', 'gitea'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];
/** Providers that set a commit status: they mirror a commit's state, so no quiet period applies. */
export const COMMIT_STATUS_TYPES: ReadonlySet<ProviderType> = new Set(['github', 'gitlab', 'gitea']);

export const NOTIFIER_EVENTS = ['started', 'applied', 'healthy', 'failed', 'superseded', 'resolved'] as const;

const DURATION = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';

export const NotifierSpecSchema = z.object({
  type: z.enum(PROVIDER_TYPES).meta({
    description:
      'generic (a CloudEvents webhook, HMAC-signed when the Secret has `token`), slack and msteams (incoming ' +
      'webhooks), github, gitlab, gitea (commit status on the revision; gitea also serves Forgejo).',
  }),
  address: z
    .string()
    .max(2048)
    .optional()
    .meta({
      description:
        'The webhook URL, or for github/gitlab/gitea the repository URL (https://host/owner/repo). A Secret key ' +
        '`address` overrides it (a Slack or Teams webhook URL is a credential: keep it there).',
    }),
  secretRef: z
    .object({ name: nameField() })
    .optional()
    .meta({
      description:
        "A Secret in the Notifier's namespace: `address`, `token` (the HMAC key of generic; the API token of a " +
        'forge), `ca.crt` (a private CA for the receiver).',
    }),
  selector: z
    .object({ matchLabels: z.record(z.string(), z.string().max(63)).optional() })
    .optional()
    .meta({
      description: 'PackageSyncs of this namespace whose labels match; none = every PackageSync of the namespace.',
    }),
  events: z
    .array(z.enum(NOTIFIER_EVENTS))
    .max(6)
    .optional()
    .meta({
      description:
        'Which record phases to send. Default: every phase for generic and the commit status providers; healthy, ' +
        'failed and resolved for slack and msteams.',
    }),
  quietPeriod: z
    .string()
    .regex(new RegExp(DURATION), 'quietPeriod must be a duration such as 30s, 5m or 1h30m')
    .default('10m')
    .meta({
      description:
        'A failure with the same reason as one sent within this period is not sent again (nor its recovery). ' +
        'Commit statuses ignore it. Default 10m.',
    }),
  template: z
    .object({
      title: z.string().max(1024).optional(),
      text: z.string().max(4096).optional(),
    })
    .optional()
    .meta({
      description:
        'Message text with {{ .field }} placeholders: namespace, name, revision, commit, phase, reason, message, ' +
        'cause, created, configured, pruned, url, id. No other syntax.',
    }),
  targetURL: z.string().max(2048).optional().meta({
    description:
      "The link messages and commit statuses carry (e.g. the web UI's page: https://ui.example/packagesyncs/{{ .namespace }}/{{ .name }}).",
  }),
  channel: z
    .string()
    .max(80)
    .optional()
    .meta({
      description:
        'slack with a bot token (the Secret key `token`; address https://slack.com/api/chat.postMessage, the ' +
        'default): the channel to post in. The messages of one revision then go into one thread.',
    }),
  context: z.string().max(255).optional().meta({
    description: 'Commit status context (name). Default packagesync/{{ .namespace }}/{{ .name }}.',
  }),
  pullRequestComments: z
    .boolean()
    .default(false)
    .meta({
      description:
        'github, gitlab and gitea only: also comment on the open pull request whose head is the revision, once it ' +
        'is healthy or failed (and when it recovers), with the counts of what was applied. Default false.',
    }),
  suspend: z.boolean().default(false).meta({ description: 'Record transitions, deliver nothing until resumed.' }),
});

export const NotifierStatusSchema = z.object({
  observedGeneration: z.number().int().optional(),
  conditions: z.array(ConditionSchema).optional(),
});

export type NotifierSpec = z.infer<typeof NotifierSpecSchema>;
export type NotifierSpecInput = z.input<typeof NotifierSpecSchema>;

export interface Notifier {
  apiVersion: string;
  kind: typeof NOTIFIER_KIND;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
  };
  spec: NotifierSpec;
  status?: { observedGeneration?: number; conditions?: Condition[] };
}
