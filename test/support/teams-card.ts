/**
 * What a Microsoft Teams webhook accepts, checked the way the loopback receiver of the tests answers: a POST of
 * `application/json` carrying `{type: "message", attachments: [{contentType: "application/vnd.microsoft.card.adaptive",
 * content: <Adaptive Card>}]}` (Teams: "Send Adaptive Cards using an Incoming Webhook"; the Workflows template
 * "Post to a channel when a webhook request is received" posts each attachment's card), the card within what
 * Teams renders (schema 1.0–1.4 elements used here, as adaptivecards.io documents them) and the body within the
 * 28 KB Teams allows a webhook message. Returns every problem found (none: Teams would post it).
 */

const CARD = 'application/vnd.microsoft.card.adaptive';
const MAX_BYTES = 28 * 1024;
const COLORS = ['default', 'dark', 'light', 'accent', 'good', 'warning', 'attention'];
const SIZES = ['default', 'small', 'medium', 'large', 'extralarge'];
const WEIGHTS = ['default', 'lighter', 'bolder'];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown) => typeof v === 'string' && v.trim() !== '';
const oneOf = (v: unknown, allowed: string[]) =>
  v === undefined || (typeof v === 'string' && allowed.includes(v.toLowerCase()));

export function teamsWebhookProblems(req: {
  method: string;
  headers: Record<string, unknown>;
  body: string;
}): string[] {
  const problems: string[] = [];
  if (req.method !== 'POST') problems.push(`method ${req.method}, not POST`);
  if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
    problems.push(`content-type ${String(req.headers['content-type'])}, not application/json`);
  }
  if (Buffer.byteLength(req.body) > MAX_BYTES) problems.push(`body larger than ${MAX_BYTES} bytes`);
  let msg: unknown;
  try {
    msg = JSON.parse(req.body);
  } catch {
    return [...problems, 'body is not JSON'];
  }
  if (!isObject(msg) || msg.type !== 'message') problems.push('type is not "message"');
  const attachments = isObject(msg) ? msg.attachments : undefined;
  if (!Array.isArray(attachments) || attachments.length === 0) return [...problems, 'no attachments'];
  attachments.forEach((a: unknown, i) => {
    const at = `attachments[${i}]`;
    if (!isObject(a) || a.contentType !== CARD) return problems.push(`${at}.contentType is not ${CARD}`);
    if ('contentUrl' in a && a.contentUrl !== null && typeof a.contentUrl !== 'string') {
      problems.push(`${at}.contentUrl is neither null nor a URL`);
    }
    cardProblems(a.content, `${at}.content`, problems);
  });
  return problems;
}

function cardProblems(card: unknown, at: string, problems: string[]): void {
  if (!isObject(card) || card.type !== 'AdaptiveCard') {
    problems.push(`${at}.type is not AdaptiveCard`);
    return;
  }
  if (card.$schema !== undefined && card.$schema !== 'http://adaptivecards.io/schemas/adaptive-card.json') {
    problems.push(`${at}.$schema is not the Adaptive Card schema`);
  }
  const version = /^1\.(\d+)$/.exec(String(card.version));
  if (!version || Number(version[1]) > 4) problems.push(`${at}.version ${String(card.version)} is not 1.0–1.4`);
  if (!Array.isArray(card.body) || card.body.length === 0) problems.push(`${at}.body is empty`);
  else card.body.forEach((e: unknown, i) => elementProblems(e, `${at}.body[${i}]`, problems));
  if (card.actions !== undefined) {
    if (!Array.isArray(card.actions)) problems.push(`${at}.actions is not a list`);
    else
      card.actions.forEach((a: unknown, i) => {
        if (!isObject(a) || a.type !== 'Action.OpenUrl') problems.push(`${at}.actions[${i}] is not Action.OpenUrl`);
        else if (!/^https?:\/\/[^\s]+$/.test(String(a.url))) problems.push(`${at}.actions[${i}].url is no http(s) URL`);
      });
  }
}

function elementProblems(e: unknown, at: string, problems: string[]): void {
  if (!isObject(e)) return void problems.push(`${at} is not an element`);
  switch (e.type) {
    case 'TextBlock':
      if (!nonEmpty(e.text)) problems.push(`${at}.text is empty`);
      if (!oneOf(e.color, COLORS)) problems.push(`${at}.color ${String(e.color)} is not a TextBlock colour`);
      if (!oneOf(e.size, SIZES)) problems.push(`${at}.size ${String(e.size)} is not a TextBlock size`);
      if (!oneOf(e.weight, WEIGHTS)) problems.push(`${at}.weight ${String(e.weight)} is not a TextBlock weight`);
      return;
    case 'FactSet':
      if (!Array.isArray(e.facts) || e.facts.length === 0) return void problems.push(`${at}.facts is empty`);
      e.facts.forEach((f: unknown, i) => {
        if (!isObject(f) || typeof f.title !== 'string' || !nonEmpty(f.value)) {
          problems.push(`${at}.facts[${i}] needs a title and a non-empty value`);
        }
      });
      return;
    case 'Container':
      if (!Array.isArray(e.items) || e.items.length === 0) return void problems.push(`${at}.items is empty`);
      e.items.forEach((item: unknown, i) => elementProblems(item, `${at}.items[${i}]`, problems));
      return;
    default:
      problems.push(`${at}.type ${String(e.type)} is not an element this card format uses`);
  }
}
