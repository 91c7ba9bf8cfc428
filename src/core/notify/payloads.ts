/**
 * One request per message and provider (docs/adr/0040), as plain data: the adapter only sends it. The same
 * template fields reach every provider; one small builder per provider, as Flux's notifier package has one file
 * per provider.
 */
import { createHmac } from 'node:crypto';
import { COMMIT_STATUS_TYPES } from '../../api/notifier.ts';
import type { RecordMessage } from './record.ts';
import { DEFAULT_TEXT, DEFAULT_TITLE, fieldsOf, renderTemplate, type TemplateFields } from './template.ts';
import { commitStatusRequest } from './commit-status.ts';
import { pullRequestCommentRequest } from './pull-request.ts';
import { slackRequest, threadOf, type SlackThread } from './slack.ts';
import { teamsRequest } from './teams.ts';
import { safeUrl, type Built, type OutboundRequest, type ProviderConfig } from './request.ts';

export type { Built, OutboundRequest, ProviderConfig };

/**
 * The request that delivers `msg`, or why none is sent (e.g. a commit status for a revision that is no commit).
 * `ctx.thread`: the Slack thread of `msg`'s PackageSync (slack.ts), when the Notifier keeps one.
 */
export function buildRequest(cfg: ProviderConfig, msg: RecordMessage, ctx: { thread?: SlackThread } = {}): Built {
  const known = [cfg.token, cfg.address].filter((v): v is string => !!v);
  const base = fieldsOf(msg, '', known);
  const url = cfg.targetURL ? safeUrl(renderTemplate(cfg.targetURL, base)) : '';
  const fields: TemplateFields = { ...base, url };
  const title = renderTemplate(cfg.title ?? DEFAULT_TITLE, fields);
  const text = renderTemplate(cfg.text ?? DEFAULT_TEXT[msg.kind], fields);
  if (msg.channel === 'pull-request') return pullRequestCommentRequest(cfg, msg, fields);
  if (COMMIT_STATUS_TYPES.has(cfg.type)) return commitStatusRequest(cfg, msg, fields, text);
  switch (cfg.type) {
    case 'generic':
      return { request: cloudEvent(cfg, msg, fields, title, text) };
    case 'slack':
      return slackRequest(cfg, msg, title, text, url, threadOf(ctx.thread, msg));
    case 'msteams':
      return { request: teamsRequest(cfg.address, msg, fields, title, text, url) };
    default:
      return { skip: `no provider ${cfg.type}` };
  }
}

/** The header the generic provider signs with: Flux's generic-hmac header, `sha256=<hex>`. */
export const SIGNATURE_HEADER = 'x-signature';

export function signature(body: string, key: string): string {
  return `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;
}

/** CloudEvents 1.0, structured content mode (the whole event is the JSON body). */
function cloudEvent(
  cfg: ProviderConfig,
  msg: RecordMessage,
  f: TemplateFields,
  title: string,
  text: string,
): OutboundRequest {
  const event = {
    specversion: '1.0',
    id: msg.id,
    source: `/apis/packagesync.io/v1alpha1/namespaces/${msg.namespace}/packagesyncs/${msg.name}`,
    type: `io.packagesync.deployment.${msg.kind}`,
    subject: f.revision,
    time: msg.at,
    datacontenttype: 'application/json',
    data: {
      namespace: msg.namespace,
      name: msg.name,
      uid: msg.uid,
      revision: f.revision,
      commit: f.commit,
      phase: msg.kind,
      ...(msg.reason ? { reason: f.reason } : {}),
      ...(msg.message ? { message: f.message } : {}),
      ...(msg.cause ? { cause: f.cause } : {}),
      ...(msg.counts ? { counts: msg.counts } : {}),
      ...(msg.supersededBy ? { supersededBy: msg.supersededBy } : {}),
      ...(f.url ? { url: f.url } : {}),
      title,
      text,
    },
  };
  const body = JSON.stringify(event);
  const headers: Record<string, string> = { 'content-type': 'application/cloudevents+json; charset=utf-8' };
  if (cfg.token) headers[SIGNATURE_HEADER] = signature(body, cfg.token);
  return { method: 'POST', url: cfg.address, headers, body };
}
