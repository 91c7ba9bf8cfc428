/**
 * A Notifier's spec read into what delivery needs (docs/adr/0040), with every problem a user can fix named by its
 * field: the Notifier's Ready=False carries it, and nothing is sent until it is fixed.
 */
import { durationMs } from '../../api/packagesync.ts';
import { COMMIT_STATUS_TYPES, type NotifierSpec } from '../../api/notifier.ts';
import type { MessageKind, RecordPolicy } from './record.ts';
import { templateProblem } from './template.ts';
import type { ProviderConfig } from './request.ts';
import { SLACK_API } from './slack.ts';

const CHAT_DEFAULT: readonly MessageKind[] = ['healthy', 'failed', 'resolved'];
const ALL: readonly MessageKind[] = ['started', 'applied', 'healthy', 'failed', 'superseded', 'resolved'];

export function policyOf(spec: NotifierSpec): RecordPolicy {
  const chat = spec.type === 'slack' || spec.type === 'msteams';
  return {
    kinds: new Set(spec.events ?? (chat ? CHAT_DEFAULT : ALL)),
    quietPeriodMs: durationMs(spec.quietPeriod ?? '10m'),
    mirrorsState: COMMIT_STATUS_TYPES.has(spec.type),
  };
}

/** The Secret's keys a Notifier reads. */
export interface NotifierSecret {
  address?: string;
  token?: string;
  'ca.crt'?: string;
}

/**
 * The provider configuration, or the first problem: `secret` is the Secret's data (undefined: no secretRef, or it
 * does not exist: `secretMissing`). `allowHttp`: the controller's --allow-insecure-http.
 */
export function providerConfigOf(
  spec: NotifierSpec,
  secret: NotifierSecret | undefined,
  opts: { secretMissing?: boolean; allowHttp?: boolean } = {},
): { config: ProviderConfig } | { problem: string; reason: string } {
  if (opts.secretMissing) {
    return {
      reason: 'SecretNotFound',
      problem: `spec.secretRef: Secret ${spec.secretRef?.name} not found in this namespace`,
    };
  }
  // a Slack bot token posts through the Web API (as Flux's slack Provider): its address is Slack's unless given;
  // an incoming webhook address keeps the webhook (its answer is no Web API answer), the token unused
  const given = (secret?.address ?? spec.address ?? '').trim();
  const slackApi = spec.type === 'slack' && !!secret?.token && (!given || given.endsWith('/api/chat.postMessage'));
  const address = given || (slackApi ? SLACK_API : '');
  if (!address) {
    return { reason: 'InvalidSpec', problem: 'spec.address (or the Secret key address) is required' };
  }
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    // never echo the address: it may be a credential (a Slack webhook URL)
    return { reason: 'InvalidSpec', problem: `${where(spec, secret)} is not a URL` };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && opts.allowHttp)) {
    return { reason: 'InvalidSpec', problem: `${where(spec, secret)} must be an https:// URL` };
  }
  if (url.username || url.password) {
    return {
      reason: 'InvalidSpec',
      problem: `${where(spec, secret)} must not carry credentials: put a token in the Secret`,
    };
  }
  if (spec.pullRequestComments && !COMMIT_STATUS_TYPES.has(spec.type)) {
    return {
      reason: 'InvalidSpec',
      problem: `spec.pullRequestComments: ${spec.type} has no pull requests; only github, gitlab and gitea do`,
    };
  }
  if (COMMIT_STATUS_TYPES.has(spec.type) && !secret?.token) {
    return {
      reason: 'InvalidSpec',
      problem: `spec.secretRef: a ${spec.type} commit status needs an API token in the Secret key token`,
    };
  }
  if (slackApi && !spec.channel) {
    return {
      reason: 'InvalidSpec',
      problem:
        'spec.channel: a slack Notifier with a bot token (Secret key token) posts with chat.postMessage, which needs a channel',
    };
  }
  for (const [text, field] of [
    [spec.template?.title, 'spec.template.title'],
    [spec.template?.text, 'spec.template.text'],
    [spec.targetURL, 'spec.targetURL'],
    [spec.context, 'spec.context'],
  ] as const) {
    const problem = text === undefined ? undefined : templateProblem(text, field);
    if (problem) return { reason: 'InvalidTemplate', problem };
  }
  return {
    config: {
      type: spec.type,
      address: url.toString(),
      ...(secret?.token ? { token: secret.token } : {}),
      ...(spec.template?.title ? { title: spec.template.title } : {}),
      ...(spec.template?.text ? { text: spec.template.text } : {}),
      ...(spec.targetURL ? { targetURL: spec.targetURL } : {}),
      ...(spec.context ? { context: spec.context } : {}),
      ...(slackApi ? { channel: spec.channel } : {}),
    },
  };
}

const where = (spec: NotifierSpec, secret: NotifierSecret | undefined) =>
  secret?.address ? `the Secret ${spec.secretRef?.name} key address` : 'spec.address';

/** True when the labels match the Notifier's selector (none: every PackageSync of the namespace). */
export function selects(spec: NotifierSpec, labels: Record<string, string> | undefined): boolean {
  return Object.entries(spec.selector?.matchLabels ?? {}).every(([k, v]) => labels?.[k] === v);
}
