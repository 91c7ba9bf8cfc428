/**
 * Microsoft Teams (docs/adr/0040): one Adaptive Card in a `message`, the shape Teams documents for incoming
 * webhooks ("Send Adaptive Cards using an Incoming Webhook") and the one its Workflows webhook template ("Post to a
 * channel when a webhook request is received") posts attachment by attachment. Flux's msteams provider sends the
 * same card (notification-controller internal/notifier/teams.go): version 1.4, the highest Teams renders in
 * Workflows; full width; the text in `attention` colour on an error; the record's fields as a FactSet. Teams'
 * webhooks neither thread nor update a message, so each message stands alone.
 */
import type { MessageKind, RecordMessage } from './record.ts';
import type { TemplateFields } from './template.ts';
import { json, type OutboundRequest } from './request.ts';

export const TEAMS_CARD_VERSION = '1.4';

/** Adaptive Card TextBlock colours: how a person scanning the channel tells an ending from progress. */
const COLOR: Partial<Record<MessageKind, string>> = {
  failed: 'attention',
  superseded: 'warning',
  healthy: 'good',
  resolved: 'good',
};

export function teamsRequest(
  address: string,
  msg: RecordMessage,
  f: TemplateFields,
  title: string,
  text: string,
  url: string,
): OutboundRequest {
  // the same fields as every provider's; a fact's value must be a non-empty string in Teams
  const facts = [
    { title: 'PackageSync', value: `${f.namespace}/${f.name}` },
    { title: 'Revision', value: f.revision },
    { title: 'Phase', value: f.phase },
    { title: 'Reason', value: f.reason },
  ].filter((fact) => fact.value !== '');
  const color = COLOR[msg.kind];
  return json(address, {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: TEAMS_CARD_VERSION,
          msteams: { width: 'Full' },
          body: [
            { type: 'TextBlock', text: title, weight: 'Bolder', size: 'Medium', wrap: true },
            { type: 'TextBlock', text, wrap: true, ...(color ? { color } : {}) },
            { type: 'FactSet', facts },
          ],
          ...(url ? { actions: [{ type: 'Action.OpenUrl', title: 'Open', url }] } : {}),
        },
      },
    ],
  });
}
